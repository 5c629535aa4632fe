import { expect } from "chai";
import { decodeRecord, encodeRecord, readRecordHeader, readRecordKind, readRecordPayload } from "../../src/journal/record-codec.js";
import type { JournalRecord } from "../../src/journal/records.js";
import { createPayloadCodec } from "../../src/engine/payloads.js";

const codec = createPayloadCodec(undefined);
const context = { workflowId: "order-1", runId: 2, position: 3 };
const at = 1_700_000_000_000;

/** One record of each kind that can name the cluster request it performs, with and without one. */
const records: JournalRecord[] = [
  { kind: "start", at, type: "order", runId: 2, seed: 7, input: { n: 1 }, request: "req-start" },
  { kind: "start", at, type: "order", runId: 2, seed: 7, input: { n: 1 } },
  { kind: "signal", at, name: "paid", value: 42n, request: "req-signal" },
  { kind: "signal", at, name: "paid", value: 42n },
  { kind: "cancel", at, reason: "customer asked", request: "req-cancel" },
  { kind: "completion", at, token: "t", ok: true, value: "done", request: "req-complete" },
  { kind: "finish", at, status: "ok", value: new Date(at), request: "req-finish" },
];

describe("journal record encoding", () => {
  for (const record of records) {
    const named = "request" in record ? ` naming request ${record.request}` : "";
    it(`round-trips a ${record.kind} record${named}`, () => {
      const body = encodeRecord(record, codec, context);
      expect(decodeRecord(body, codec, context)).to.deep.equal(record);
      expect(readRecordKind(body)).to.equal(record.kind);
    });
  }

  it("keeps the request in the header, readable without the payload, and user values out of it", () => {
    const body = encodeRecord({ kind: "signal", at, name: "paid", value: "secret-card-number", request: "req-1" }, codec, context);
    const header = readRecordHeader(Buffer.from(body));
    expect(header).to.deep.equal({ kind: "signal", at, name: "paid", request: "req-1" });
    // The same header through the decoder for plain Uint8Arrays.
    expect(readRecordHeader(new Uint8Array(body))).to.deep.equal(header);
  });

  it("writes a step's header as the JSON of { at, seq, name, ok, attempts }, whatever the name holds", () => {
    const names = ["add", 'quo"te', "back\\slash", "größe 👋", "line\nbreak", "\u0000nul", "add"];
    const times = [at, 0, 9, 10, Number.MAX_SAFE_INTEGER, 1.5, -0, -1, Number.NaN, Number.POSITIVE_INFINITY];
    const counts: [number, number][] = [
      [3, 2],
      [10, 1],
      [1_234_567, 99],
    ];
    for (const name of names) {
      for (const t of times) {
        for (const [seq, attempts] of counts) {
          for (const ok of [true, false]) {
            const record: JournalRecord = ok
              ? { kind: "step", at: t, seq, name, ok, attempts, value: 1 }
              : { kind: "step", at: t, seq, name, ok, attempts, error: new Error("no") };
            const body = encodeRecord(record, codec, context);
            const length = body[2]! | (body[3]! << 8) | (body[4]! << 16) | (body[5]! << 24);
            const text = Buffer.from(body.subarray(6, 6 + length)).toString("utf8");
            expect(text).to.equal(JSON.stringify({ at: t, seq, name, ok, attempts }));
            expect(readRecordHeader(body)).to.deep.equal({ kind: "step", ...JSON.parse(text) });
            expect(decodeRecord(body, codec, context)).to.deep.include({ kind: "step", seq, name, ok, attempts });
          }
        }
      }
    }
  });

  it("writes a step's result as the payload codec encodes it, plain JSON or not, and reads it back", () => {
    const values: unknown[] = [
      "größe 👋",
      "",
      42,
      1.5,
      null,
      true,
      { a: [1, "x"], b: { c: null } },
      [],
      new Date(at),
      undefined,
      10n,
      -0,
      [undefined],
    ];
    for (const value of values) {
      const body = encodeRecord({ kind: "step", at, seq: 4, name: "add", ok: true, attempts: 1, value }, codec, context);
      expect(Buffer.from(readRecordPayload(body))).to.deep.equal(Buffer.from(codec.encodeValue(value, context)));
      expect(decodeRecord(body, codec, context)).to.deep.equal({ kind: "step", at, seq: 4, name: "add", ok: true, attempts: 1, value });
    }
  });
});
