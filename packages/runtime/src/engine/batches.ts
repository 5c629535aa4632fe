import type { Clock } from "../core/clock.js";
import { checkId } from "../core/ids.js";
import { EventWindows, type WindowPolicy } from "./event-windows.js";
import type { Batch } from "./flow-rules.js";
import type { FlowRuns } from "./flow-runs.js";
import type { SystemRecord } from "../journal/system-records.js";
import { checkFlowName, type SystemLog } from "./system-streams.js";

interface BatchRule {
  readonly size: number;
  readonly timeoutMs: number;
}

const POLICY: WindowPolicy<BatchRule> = {
  family: "batch",
  firedKind: "batch-fired",
  keepLatest: false,
  runId: (key, n) => `${key}#${n}`,
  eventRecord: (e) => ({
    kind: "batch-event",
    at: e.at,
    type: e.type,
    ...(e.eventId !== undefined ? { eventId: e.eventId } : {}),
    size: e.rule.size,
    timeoutMs: e.rule.timeoutMs,
    event: e.value,
  }),
  readEvent: (r: SystemRecord) =>
    r.kind === "batch-event"
      ? { type: r.type, eventId: r.eventId, at: r.at, rule: { size: r.size, timeoutMs: r.timeoutMs }, value: r.event }
      : undefined,
  deadline: (w) => w.firstAt + w.rule.timeoutMs,
  full: (w) => w.values.length >= w.rule.size,
  input: (w) => w.values,
};

/**
 * Batched events: the events of one key collect into a batch that becomes one run, with the
 * events in arrival order as its input, once the batch is full or its timeout (from its first
 * event) has passed. The run's ID is `<key>#<n>`, where `n` grows with each batch of the key.
 */
export class Batcher extends EventWindows<BatchRule> {
  constructor(sys: SystemLog, runs: FlowRuns, clock: Clock, failed: (e: unknown) => void) {
    super(POLICY, sys, runs, clock, failed);
  }

  /** Adds an event to the key's batch; resolves once it is durable, with the ID of the batch's run. */
  batch(type: string, key: string, event: unknown, rule: Batch, eventId: string | undefined): Promise<string> {
    const resolved = rule.resolve();
    checkFlowName(key, "batch key");
    if (eventId !== undefined) checkId(eventId, "event ID");
    return this.add(type, key, event, resolved, eventId);
  }
}
