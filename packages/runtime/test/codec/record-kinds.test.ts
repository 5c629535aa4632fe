import { expect } from "chai";
import {
  INDEXED_KINDS,
  RECORD_KINDS,
  callName,
  describeRecord,
  isCallRecord,
  readsBackUnchanged,
  wakesRun,
} from "../../src/journal/record-kinds.js";
import { assembleRecord, readRecordKind } from "../../src/journal/record-codec.js";
import type { JournalRecord, RecordKind } from "../../src/journal/records.js";

const at = 1_700_000_000_000;

/** The kind codes data directories hold: a code, once written, means its kind forever. */
const CODES_ON_DISK: Record<RecordKind, number> = {
  start: 1,
  step: 2,
  signal: 3,
  update: 4,
  "update-result": 5,
  timer: 6,
  fired: 7,
  patch: 8,
  attributes: 9,
  finish: 10,
  heartbeat: 11,
  completion: 12,
  child: 13,
  "child-result": 14,
  cancel: 15,
  attempt: 16,
  stopped: 17,
  resumed: 18,
};

describe("record kinds", () => {
  it("keeps the code of every kind that data directories hold, and gives no two kinds one code", () => {
    const codes = Object.fromEntries(Object.entries(RECORD_KINDS).map(([kind, d]) => [kind, d.code]));
    expect(codes).to.deep.equal(CODES_ON_DISK);
    expect(new Set(Object.values(codes)).size).to.equal(Object.keys(codes).length);
  });

  it("reads each kind back from its code", () => {
    for (const [kind, code] of Object.entries(CODES_ON_DISK)) {
      const body = assembleRecord({ kind: kind as RecordKind, at }, new Uint8Array(0));
      expect(body[1]).to.equal(code);
      expect(readRecordKind(body)).to.equal(kind);
    }
  });

  it("indexes on open the kinds the run index keeps: starts, timers, finishes, attributes, children and stops", () => {
    expect([...INDEXED_KINDS].sort()).to.deep.equal([
      "attributes",
      "child",
      "child-result",
      "finish",
      "fired",
      "resumed",
      "start",
      "stopped",
      "timer",
    ]);
  });

  it("wakes a parked run for what it waits on, not for its own results", () => {
    const wakes = (Object.keys(RECORD_KINDS) as RecordKind[]).filter((kind) => RECORD_KINDS[kind].wakes).sort();
    expect(wakes).to.deep.equal(["cancel", "child", "child-result", "completion", "fired", "signal", "update"]);
    expect(wakesRun({ kind: "signal", at, name: "go", value: 1 })).to.equal(true);
    expect(wakesRun({ kind: "step", at, seq: 1, name: "s", ok: true, value: 1, attempts: 1 })).to.equal(false);
  });

  it("checks replayed calls by kind and name: a step's name, a patch's ID, a child's ID", () => {
    const calls: JournalRecord[] = [
      { kind: "step", at, seq: 1, name: "charge", ok: true, value: 1, attempts: 1 },
      { kind: "patch", at, seq: 2, id: "fix" },
      { kind: "child", at, seq: 3, childId: "c-1", ok: true },
      { kind: "timer", at, seq: 4, until: at },
      { kind: "attributes", at, seq: 5, attributes: {} },
    ];
    expect(calls.every(isCallRecord)).to.equal(true);
    expect(calls.map((r) => (isCallRecord(r) ? callName(r) : "not a call"))).to.deep.equal(["charge", "fix", "c-1", undefined, undefined]);
    expect(isCallRecord({ kind: "signal", at, name: "go", value: 1 })).to.equal(false);
    expect(describeRecord(calls[0] as JournalRecord)).to.equal("step 'charge' (call #1)");
  });

  it("hands a record to the code as it is only when decoding would give the same values back", () => {
    expect(readsBackUnchanged({ kind: "step", at, seq: 1, name: "s", ok: true, value: "plain", attempts: 1 })).to.equal(true);
    expect(readsBackUnchanged({ kind: "step", at, seq: 1, name: "s", ok: true, value: { an: "object" }, attempts: 1 })).to.equal(false);
    expect(readsBackUnchanged({ kind: "step", at, seq: 1, name: "s", ok: false, error: new Error("x"), attempts: 1 })).to.equal(false);
    expect(readsBackUnchanged({ kind: "fired", at, seq: 1 })).to.equal(true);
  });
});
