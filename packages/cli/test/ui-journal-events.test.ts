import { expect } from "chai";
import type { ExportedRecord } from "@fusee/runtime";
import { journalEvents } from "../src/ui/journal-events.js";
import { span } from "../src/ui/timeline.js";

const error = (message: string) => ({ tagged: { $: "e", name: "Error", message, stack: `Error: ${message}\n    at here` } });
const at = (s: number): number => 1_700_000_000_000 + s * 1000;

describe("journalEvents", () => {
  it("groups a step's failed attempts, heartbeats and result, a timer set and fired, an update and its answer, a child and its result", () => {
    const records: ExportedRecord[] = [
      { kind: "start", at: at(0), type: "Pay", runId: 1, seed: 1, payload: { plain: [700] } },
      { kind: "attempt", at: at(2), seq: 1, name: "charge", attempt: 1, retryAt: at(5), payload: error("declined") },
      { kind: "heartbeat", at: at(6), seq: 1, payload: { plain: { done: 1 } } },
      { kind: "step", at: at(7), seq: 1, name: "charge", ok: true, attempts: 2, payload: { plain: "r-1" } },
      { kind: "timer", at: at(8), seq: 2, until: at(68) },
      { kind: "update", at: at(9), id: "u-1", name: "add", payload: { plain: "apple" } },
      { kind: "child", at: at(10), seq: 3, childId: "pay-1/ship", ok: true, childRunId: 1, close: "terminate" },
      { kind: "update-result", at: at(11), id: "u-1", ok: true, payload: { plain: 5 } },
      { kind: "fired", at: at(68), seq: 2 },
      { kind: "child-result", at: at(70), seq: 3, childId: "pay-1/ship", status: "failed", payload: error("no ship") },
      { kind: "signal", at: at(71), name: "go", payload: { plain: 1 } },
    ];
    const events = journalEvents(records);
    expect(events.map((e) => [e.kind, e.label, e.positions, e.open])).to.deep.equal([
      ["run", "started Pay", [0], false],
      ["step", "charge ok after 2 attempts", [1, 2, 3], false],
      ["timer", "timer fired", [4, 8], false],
      ["update", "update add answered", [5, 7], false],
      ["child", "child pay-1/ship failed", [6, 9], false],
      ["signal", "signal go", [10], false],
    ]);
    const step = events[1]!;
    expect(step).to.deep.include({
      from: at(0),
      to: at(7),
      finalFrom: at(5),
      heartbeats: 1,
      progress: { plain: { done: 1 } },
      payload: { plain: "r-1" },
    });
    expect(step.attempts).to.deep.equal([{ attempt: 1, from: at(0), to: at(2), retryAt: at(5), error: error("declined") }]);
    expect(events[3]).to.deep.include({ input: { plain: "apple" }, payload: { plain: 5 }, from: at(9), to: at(11) });
    expect(events[4]).to.deep.include({ failed: true, childId: "pay-1/ship", to: at(70) });
  });

  it("leaves open what the journal has not finished: a step between attempts, a timer, an update, a child", () => {
    const records: ExportedRecord[] = [
      { kind: "start", at: at(0), type: "Pay", runId: 1, seed: 1 },
      { kind: "attempt", at: at(1), seq: 1, name: "charge", attempt: 1, retryAt: at(10), payload: error("a") },
      { kind: "attempt", at: at(11), seq: 1, name: "charge", attempt: 2, retryAt: at(30), payload: error("b") },
      { kind: "timer", at: at(12), seq: 2, until: at(99) },
      { kind: "update", at: at(13), id: "u-1", name: "add" },
      { kind: "child", at: at(14), seq: 3, childId: "c", ok: true, childRunId: 1 },
      { kind: "cancel", at: at(15), payload: { plain: "enough" } },
      { kind: "stop", at: at(16) } as unknown as ExportedRecord,
    ];
    const events = journalEvents(records);
    expect(events.filter((e) => e.open).map((e) => e.label)).to.deep.equal([
      "charge: attempt 2 failed, attempt 3 due",
      "timer set",
      "update add accepted",
      "child c started",
    ]);
    const step = events[1]!;
    expect(step.attempts.map((a) => [a.from, a.to, a.retryAt])).to.deep.equal([
      [at(0), at(1), at(10)],
      [at(10), at(11), at(30)],
    ]);
    expect(events[2]).to.include({ until: at(99) });
    expect(events.slice(-2).map((e) => [e.kind, e.label])).to.deep.equal([
      ["cancel", "cancellation requested"],
      ["other", "stop"],
    ]);
  });
});

describe("span", () => {
  it("writes a duration the way a person reads it, never 60 of a unit", () => {
    expect([850, 12_500, 200_000, 7_500_000].map(span)).to.deep.equal(["850ms", "12.5s", "3m20s", "2h05m"]);
    expect(span(3_599_700)).to.equal("1h00m");
    expect(span(86_399_900)).to.equal("24h00m");
    expect(span(119_800)).to.equal("2m00s");
    expect([999.7, 9_999, 59_990].map(span)).to.deep.equal(["1.00s", "10.0s", "1m00s"]);
  });
});
