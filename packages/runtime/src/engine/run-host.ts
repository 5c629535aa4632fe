import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { JournalRecord } from "../journal/records.js";
import type { WorkflowDefinition } from "../workflow/registry.js";
import type { Message } from "../workflow/messages.js";
import type { ChildRequest, RunExecutor, RunHost } from "../workflow/run-executor.js";
import type { StepOptions } from "../workflow/step-options.js";
import type { AttemptObserver, PermitRequest } from "../workflow/step-runner.js";
import type { RunEntry } from "./run-entry.js";

/** What every run's host asks of the engine: one object per engine, shared by all its runs. */
export interface RunHostEngine {
  readonly clock: Clock;
  readonly logger: Logger | undefined;
  /** True once the engine shut down. */
  closed(): boolean;
  /** Whether the engine may still work on the runs of `shard` (in a cluster, its lease has not run out). */
  holds(shard: number): boolean;
  append(entry: RunEntry, record: JournalRecord): void;
  changed(entry: RunEntry, executor: RunExecutor): void;
  acquire(options: StepOptions): PermitRequest | undefined;
  startChild(entry: RunEntry, request: ChildRequest): void;
  continueAsNew(
    entry: RunEntry,
    runId: number,
    def: WorkflowDefinition,
    input: unknown,
    attributes: Readonly<Record<string, unknown>> | undefined,
    executor: RunExecutor,
  ): void;
  closeChild(entry: RunEntry, childId: string, reason: string): void;
  deliver(target: string, message: Message, request: string): Promise<unknown>;
  /** Present when steps are traced or measured. */
  observeAttempt?(entry: RunEntry, name: string, attempt: number): AttemptObserver;
}

/**
 * The engine's side of one run's executor. A run that was replaced (a new run of its ID, an
 * eviction that made another executor current) can no longer append, start children or continue;
 * every call checks that first. One object per run, where closures would cost one per method.
 */
export class EngineRunHost implements RunHost {
  /** The executor this host serves; set right after the executor is made. */
  executor: RunExecutor | undefined = undefined;

  constructor(
    private readonly engine: RunHostEngine,
    private readonly entry: RunEntry,
    readonly runId: number,
    private readonly def: WorkflowDefinition,
  ) {}

  get workflowId(): string {
    return this.entry.id;
  }

  get clock(): Clock {
    return this.engine.clock;
  }

  get logger(): Logger | undefined {
    return this.engine.logger;
  }

  append(record: JournalRecord): void {
    if (this.current()) this.engine.append(this.entry, record);
  }

  appended(): number {
    // A replaced run appends nothing: what its executor waits to record is dropped at once anyway.
    return this.current() ? this.entry.appended : 0;
  }

  cancelTimer(seq: number): void {
    if (this.entry.runId === this.runId) this.entry.clearTimer(seq);
  }

  closed(): boolean {
    return this.engine.closed() || this.entry.executor !== this.executor || !this.engine.holds(this.entry.shard);
  }

  changed(): void {
    if (this.executor !== undefined) this.engine.changed(this.entry, this.executor);
  }

  acquire(options: StepOptions): PermitRequest | undefined {
    return this.engine.acquire(options);
  }

  startChild(request: ChildRequest): void {
    if (this.current()) this.engine.startChild(this.entry, request);
  }

  continueAsNew(input: unknown, attributes: Readonly<Record<string, unknown>> | undefined): void {
    if (this.current()) this.engine.continueAsNew(this.entry, this.runId, this.def, input, attributes, this.executor as RunExecutor);
  }

  closeChild(childId: string, reason: string): void {
    if (this.entry.runId === this.runId) this.engine.closeChild(this.entry, childId, reason);
  }

  deliver(target: string, message: Message, request: string): Promise<unknown> {
    return this.engine.deliver(target, message, request);
  }

  observeAttempt(name: string, attempt: number): AttemptObserver | undefined {
    return this.engine.observeAttempt?.(this.entry, name, attempt);
  }

  /** Whether this host's run is still the entry's current run, executed by this host's executor. */
  private current(): boolean {
    return this.entry.runId === this.runId && this.entry.executor === this.executor;
  }
}
