import { expect } from "chai";
import { parseHeaderJson } from "../../src/core/header-json.js";

/** Parses `text` placed in the middle of a larger buffer, as headers sit inside record bodies. */
function parse(text: string): Record<string, unknown> {
  const bytes = Buffer.from(`xx${text}yy`, "utf8");
  return parseHeaderJson(bytes, 2, bytes.length - 2);
}

function expectSameAsJson(text: string): void {
  const ours = parse(text);
  const theirs = JSON.parse(text) as Record<string, unknown>;
  expect(ours, text).to.deep.equal(theirs);
  expect(Object.keys(ours), text).to.deep.equal(Object.keys(theirs));
  expect(Object.getPrototypeOf(ours), text).to.equal(Object.prototype);
}

describe("record header parsing", () => {
  const cases = [
    "{}",
    '{"at":1700000000000,"seq":3,"until":1700000060000}',
    '{"at":1700000000000,"type":"order","runId":2,"seed":4080599881}',
    '{"at":0,"seq":-1,"ok":true,"done":false,"none":null}',
    '{"big":123456789012345678,"neg":-123456789012345678,"max":9007199254740993}',
    '{"frac":1.5,"exp":1e21,"negexp":-2.5E-3}',
    '{"name":"größe 👋","after":1}',
    '{"name":"quote \\" inside","n":1}',
    '{"name":"\\u0041 escaped"}',
    '{"update":{"id":"u1","name":"add"},"at":5}',
    '{"list":[1,2,3]}',
    '{"at":1700000000000,"type":"order","runId":1,"seed":3537745400,"flags":[1]}',
    '{"flags":[]}',
    '{"flags":[-1,0,123456789012345678]}',
    '{"flags":[1.5,2]}',
    '{"flags":[1e3]}',
    '{"flags":["a",1]}',
    '{"flags":[[1]],"n":2}',
    '{"flags":[1, 2]}',
    '{"a":1,"a":2}',
    '{ "spaced" : 1 }',
    '{"__proto__":{"polluted":true}}',
    '{"__proto__":1,"a":2}',
    '{"":""}',
    '{"zero":-0}',
  ];
  for (const text of cases) {
    it(`reads ${text} as JSON.parse does`, () => expectSameAsJson(text));
  }

  it("reads generated headers of every value shape as JSON.parse does", () => {
    let seed = 12345;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const names = ["at", "seq", "name", "type", "runId", "ok", "status", "childId", "request", "x"];
    const values: (() => unknown)[] = [
      () => next(2 ** 31),
      () => -next(1000),
      () => Date.now() + next(1e6),
      () => next(1e6) / 8,
      () => ["step", "a#b", "ünïcödé", 'q"uote', "back\\slash", "", "tab\t"][next(7)],
      () => next(2) === 0,
      () => null,
      () => ({ id: "n", seq: next(10) }),
      () => Array.from({ length: next(4) }, () => next(100) - 10),
    ];
    for (let i = 0; i < 2_000; i++) {
      const header: Record<string, unknown> = {};
      const fields = next(6);
      for (let f = 0; f < fields; f++) header[names[next(names.length)]!] = values[next(values.length)]!();
      expectSameAsJson(JSON.stringify(header));
    }
  });

  it("refuses what JSON.parse refuses", () => {
    for (const text of [
      "",
      "{",
      '{"a":}',
      '{"a":[1,]}',
      '{"a":[01]}',
      '{"a":[1}',
      '{"a":[-]}',
      '{"a":1,}',
      '{"a":01}',
      '{"a":1}x',
      '{"a" 1}',
      '{"a":tru}',
      '{"a":"open}',
    ]) {
      expect(() => JSON.parse(text), text).to.throw(SyntaxError);
      expect(() => parse(text), text).to.throw(SyntaxError);
    }
  });

  it("reads headers held in a plain Uint8Array", () => {
    const bytes = new TextEncoder().encode('..{"at":12,"type":"order"}');
    expect(parseHeaderJson(bytes, 2, bytes.length)).to.deep.equal({ at: 12, type: "order" });
  });
});
