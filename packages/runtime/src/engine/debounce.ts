import type { Clock } from "../core/clock.js";
import { checkId } from "../core/ids.js";
import { EventWindows, type WindowPolicy } from "./event-windows.js";
import type { Debounce } from "./flow-rules.js";
import type { FlowRuns } from "./flow-runs.js";
import type { SystemRecord } from "../journal/system-records.js";
import { checkFlowName, type SystemLog } from "./system-streams.js";

interface DebounceRule {
  readonly delayMs: number;
  readonly maxWaitMs: number | undefined;
}

const POLICY: WindowPolicy<DebounceRule> = {
  family: "debounce",
  firedKind: "debounce-fired",
  keepLatest: true,
  runId: (key, n) => `${key}@${n}`,
  eventRecord: (e) => ({
    kind: "debounce-event",
    at: e.at,
    type: e.type,
    ...(e.eventId !== undefined ? { eventId: e.eventId } : {}),
    delayMs: e.rule.delayMs,
    ...(e.rule.maxWaitMs !== undefined ? { maxWaitMs: e.rule.maxWaitMs } : {}),
    input: e.value,
  }),
  readEvent: (r: SystemRecord) =>
    r.kind === "debounce-event"
      ? { type: r.type, eventId: r.eventId, at: r.at, rule: { delayMs: r.delayMs, maxWaitMs: r.maxWaitMs }, value: r.input }
      : undefined,
  deadline: (w) => Math.min(w.lastAt + w.rule.delayMs, w.rule.maxWaitMs === undefined ? Infinity : w.firstAt + w.rule.maxWaitMs),
  full: () => false,
  input: (w) => w.values[w.values.length - 1],
};

/**
 * Debounced starts: the starts of one key within a window collapse into one run, started with the
 * latest input once the window has been quiet for the rule's delay (or reached its `maxWait`).
 * The run's ID is `<key>@<n>`, where `n` grows with each window of the key (it is the window's
 * opening time in ms, or one more than the previous window's number).
 */
export class Debouncer extends EventWindows<DebounceRule> {
  constructor(sys: SystemLog, runs: FlowRuns, clock: Clock, failed: (e: unknown) => void) {
    super(POLICY, sys, runs, clock, failed);
  }

  /** Adds a start to the key's window; resolves once it is durable, with the ID of the window's run. */
  debounce(type: string, key: string, input: unknown, rule: Debounce, eventId: string | undefined): Promise<string> {
    checkFlowName(key, "debounce key");
    if (eventId !== undefined) checkId(eventId, "event ID");
    const resolved = rule.resolve();
    return this.add(type, key, input, resolved, eventId);
  }
}
