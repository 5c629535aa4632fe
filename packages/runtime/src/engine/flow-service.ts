import type { FlowControl } from "./flow-control.js";
import { Batch, Debounce } from "./flow-rules.js";
import type { LimitSpec, SharedPermits } from "./limits.js";
import type { ScheduleOp } from "./schedule-handle.js";
import type { ScheduleDescription } from "./schedule-runtime.js";
import type { ScheduleSettings } from "./schedule-spec.js";
import type { BatchRule, DebounceRule } from "./run-service.js";

/** What serving flow control to callers needs. */
export interface FlowServiceDeps {
  readonly flow: FlowControl;
  /** Throws when the runs shut down or failed. */
  assertOpen(): void;
  /** Refuses a call on a shard this process does not hold; its owner performs it. */
  heldShard(shard: number): void;
  /** The registered name of a workflow type. */
  typeName(type: string): string;
}

/**
 * The calls on schedules, debounce windows and batches of the shards a process holds, each refused
 * when the shard of its name is another process's, and the limits of steps, which are the process's.
 */
export class FlowService {
  constructor(private readonly deps: FlowServiceDeps) {}

  async schedule(name: string, settings: ScheduleSettings, paused: boolean): Promise<void> {
    this.held("schedule", name);
    await this.deps.flow.schedules.schedule(name, settings, paused);
  }

  async listSchedules(shard: number): Promise<ScheduleDescription[]> {
    this.deps.assertOpen();
    this.deps.heldShard(shard);
    const flow = this.deps.flow;
    return flow.schedules.list((name) => flow.shardOf("schedule", name), shard);
  }

  async scheduleOp(name: string, op: ScheduleOp, args: readonly number[], request?: string): Promise<unknown> {
    this.held("schedule", name);
    return this.deps.flow.schedules.perform(name, op, args, request);
  }

  async debounce(type: string, key: string, input: unknown, rule: DebounceRule, eventId: string | undefined): Promise<string> {
    this.held("debounce", key);
    const debounce = rule.maxWaitMs === undefined ? Debounce.of(rule.delayMs) : Debounce.of(rule.delayMs).maxWait(rule.maxWaitMs);
    return this.deps.flow.debouncer.debounce(this.deps.typeName(type), key, input, debounce, eventId);
  }

  async batch(type: string, key: string, event: unknown, rule: BatchRule, eventId: string | undefined): Promise<string> {
    this.held("batch", key);
    return this.deps.flow.batcher.batch(this.deps.typeName(type), key, event, Batch.of(rule.size, rule.timeoutMs), eventId);
  }

  /** Starts the recovered schedules, windows and batches once the runs are loaded. */
  open(): void {
    this.deps.flow.open();
  }

  /** Forgets the debounce and batch keys whose windows all fired before `cutoff` (retention). */
  sweep(cutoff: number): Promise<void> {
    return this.deps.flow.sweep(cutoff);
  }

  /** Shares the limits' permits with the other processes of a cluster. */
  shareLimits(permits: SharedPermits): void {
    this.deps.flow.limits.share(permits);
  }

  /** Declares a limit, or changes the spec of a declared one. */
  declareLimit(name: string, spec: LimitSpec): void {
    this.deps.flow.limits.declare(name, spec);
  }

  /** Permits of the limit held now. */
  limitInUse(name: string): number {
    return this.deps.flow.limits.inUse(name);
  }

  /** Steps waiting for a permit of the limit. */
  limitWaiting(name: string): number {
    return this.deps.flow.limits.waiting(name);
  }

  /** Steps waiting for a permit, by limit, for metrics. */
  waitingByLimit(): Map<string, number> {
    const limits = this.deps.flow.limits;
    return new Map(limits.names().map((n) => [n, limits.waiting(n)]));
  }

  private held(family: "schedule" | "debounce" | "batch", name: string): void {
    this.deps.assertOpen();
    this.deps.heldShard(this.deps.flow.shardOf(family, name));
  }
}
