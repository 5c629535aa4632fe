import { toMillis, type Duration } from "../core/duration.js";
import { RejectedError } from "../core/errors.js";
import { checkWorkflowId, checkName } from "../core/ids.js";
import { scopeOf, type StepScope } from "./run-binding.js";
import { WORKFLOW_METADATA } from "./metadata-keys.js";
import { checkStepOptions } from "./registry.js";
import type { StepOptions } from "./step-options.js";
import type { InputArgs, WorkflowInput, WorkflowOutput } from "./workflow-io.js";
import type { Message } from "./messages.js";
import { WorkflowLog } from "./workflow-log.js";
import type { StartOptions } from "../client/types.js";
import type { CtxBackend } from "./ctx-backend.js";
import type { AwaitCompletionOptions, ChildHandle, ChildOptions, Completion, ContinueAsNewOptions, WaitOptions } from "./ctx-options.js";
import type { WorkflowClass } from "./registry.js";

/**
 * Patch IDs a project declares. `fusee gen` augments this interface with the IDs of the project's
 * workflows, which turns a misspelled `ctx.patched("...")` into a compile error.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface PatchIds {}

/** A declared patch ID, or any string while no IDs are declared. */
export type PatchId = [keyof PatchIds] extends [never] ? string : keyof PatchIds & string;

/** Refuses start attributes that are not a plain object of well-formed names, before anything is written. */
export function checkStartAttributes(options: StartOptions, where: string): void {
  const attributes = options.attributes;
  if (attributes === undefined) return;
  if (attributes === null || typeof attributes !== "object" || Array.isArray(attributes)) {
    throw new RejectedError(`${where}: attributes must be a plain object of attribute names to values`);
  }
  for (const key of Object.keys(attributes)) checkName(key, "attribute name");
}

function workflowName(cls: { name: string }): string {
  const meta = Reflect.getOwnMetadata(WORKFLOW_METADATA, cls) as { name?: string } | undefined;
  return meta?.name ?? cls.name;
}

/**
 * The context of one workflow run, injected into the workflow's constructor. All non-determinism in
 * workflow code (time, randomness, I/O, waiting) goes through it or through steps, so replay
 * re-creates the same state. Name the workflow class (`Ctx<Counter>`) to have `continueAsNew`
 * check its input against `run`'s.
 *
 * @example
 * constructor(private readonly ctx: Ctx<Counter>) {}
 * async run(n: number) {
 *   const id = this.ctx.uuid();
 *   await this.ctx.sleep("10s");
 *   return this.ctx.step("double", async () => n * 2);
 * }
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export class Ctx<W = any> {
  /**
   * A logger that writes nothing while the run replays and puts the run's workflow ID, type and
   * run ID on every line, through the engine's logger (`Config.logger`) or the console. Use it
   * instead of `console.log`, which replay would repeat.
   *
   * @example
   * this.ctx.log.info("order shipped", { orderId, carrier });
   */
  readonly log: WorkflowLog;

  /** @internal Created by the engine for each run; never constructed by workflow code. */
  constructor(private readonly backend: CtxBackend) {
    this.log = new WorkflowLog(backend);
  }

  /** The workflow ID this run belongs to. */
  get workflowId(): string {
    return this.backend.workflowId;
  }

  /** The workflow's type name. */
  get workflowType(): string {
    return this.backend.workflowType;
  }

  /** The run number: grows with every new run of this workflow ID. */
  runId(): number {
    return this.backend.runId();
  }

  /** Workflow time (ms since the epoch): the time of the journal record last applied. */
  now(): number {
    return this.backend.now();
  }

  /** A deterministic float in [0, 1). */
  random(): number {
    return this.backend.random();
  }

  /** A deterministic version 4 UUID. */
  uuid(): string {
    return this.backend.uuid();
  }

  /**
   * An inline durable step: `fn` runs once (retried by its policy) and its result is journaled;
   * replay returns the journaled result.
   */
  step<T>(name: string, fn: () => Promise<T> | T, options: StepOptions = {}): Promise<T> {
    if (scopeOf(this.backend) !== undefined) return Promise.resolve(fn());
    checkName(name, "step name");
    checkStepOptions(options, `ctx.step('${name}')`);
    return this.backend.step(name, fn, options) as Promise<T>;
  }

  /** Inside a running step: its idempotency key, the same across retries, new after a reset. */
  key(): string {
    return this.scope("key()").key;
  }

  /** Inside a running step: the attempt number, from 1. */
  attempt(): number {
    return this.scope("attempt()").attempt;
  }

  /**
   * Inside a running step: reports liveness and progress; the next attempt sees it via `progress()`.
   * Throws once the attempt is aborted: `CancelledError` when the run is cancelled or the engine
   * shuts down, `TerminatedError` when it is terminated, `TimeoutError` when the attempt ran past
   * its `timeout` or `heartbeatTimeout` (a retry may already be running). In a cluster it also
   * throws, checked on the spot, once the attempt's permit of a shared limit or its run's shard
   * lease ran out (the process was paused): a step that heartbeats before each effect makes none
   * that another process may be making in its place.
   */
  heartbeat(progress?: unknown): void {
    this.scope("heartbeat()").heartbeat(progress);
  }

  /**
   * Inside a running step: a signal aborted when the attempt must stop (the run is cancelled or
   * terminated, the attempt ran past its timeout, the engine shuts down), with the reason as
   * `signal.reason`. Pass it to whatever the step waits on, so an aborted attempt stops doing work
   * its run no longer wants; a step that ignores it runs to its end, and its result is still
   * journaled (after a cancellation) or ignored (after a timeout or termination).
   *
   * @example
   * @Step({ timeout: "30s" })
   * async fetchRate(): Promise<number> {
   *   const res = await fetch(RATES_URL, { signal: this.ctx.abortSignal });
   *   return (await res.json()).rate;
   * }
   */
  get abortSignal(): AbortSignal {
    return this.scope("abortSignal").abortSignal;
  }

  /** Inside a running step: the progress last reported by this or an earlier attempt. */
  progress<T>(): T | undefined {
    return this.scope("progress()").progress as T | undefined;
  }

  /** A durable timer: resolves after `d`, also across restarts. */
  sleep(d: Duration): Promise<void> {
    return this.backend.sleepUntil(this.backend.now() + toMillis(d, "ctx.sleep duration"));
  }

  /** A durable timer that resolves at the given time (ms since the epoch). */
  sleepUntil(ms: number): Promise<void> {
    if (!Number.isFinite(ms)) throw new RejectedError(`ctx.sleepUntil needs a finite time in ms; got ${ms}`);
    return this.backend.sleepUntil(ms);
  }

  /** The next buffered signal of this name (the k-th wait gets the k-th signal); `undefined` on timeout. */
  waitFor<T>(name: string, options: WaitOptions = {}): Promise<T | undefined> {
    checkName(name, "signal name");
    const timeout = options.timeout === undefined ? undefined : toMillis(options.timeout, "ctx.waitFor timeout");
    return this.backend.waitFor(name, timeout) as Promise<T | undefined>;
  }

  /** Resolves `true` once `pred()` holds after a handler ran; `false` on timeout. */
  condition(pred: () => boolean, options: WaitOptions = {}): Promise<boolean> {
    const timeout = options.timeout === undefined ? undefined : toMillis(options.timeout, "ctx.condition timeout");
    return this.backend.condition(pred, timeout);
  }

  /**
   * Versioning: `true` on new code paths, `false` when replaying a run that passed this point before
   * the patch existed.
   */
  patched(id: PatchId): boolean {
    return this.backend.patched(checkName(id, "patch ID"), false);
  }

  /**
   * Marks a patch whose old path no run needs any more: it records nothing new, and runs that hold
   * the patch record and runs that do not replay the code after it alike. A run that took the old
   * path and is still unfinished no longer matches its journal where the paths differ: it stops,
   * and calls on it fail with `NonDeterminismError`.
   */
  deprecatePatch(id: PatchId): void {
    this.backend.patched(checkName(id, "patch ID"), true);
  }

  /** Merges search attributes into the run's, durably; `engine.listWhere` filters on them. */
  setAttributes(attributes: Record<string, unknown>): void {
    if (attributes === null || typeof attributes !== "object" || Array.isArray(attributes)) {
      throw new RejectedError("ctx.setAttributes needs a plain object of attribute names to values");
    }
    for (const key of Object.keys(attributes)) checkName(key, "attribute name");
    this.backend.setAttributes(attributes);
  }

  /** Removes search attributes from the run's, durably; `listWhere` no longer matches on them. */
  removeAttributes(...names: string[]): void {
    for (const name of names) checkName(name, "attribute name");
    this.backend.setAttributes({}, names);
  }

  /**
   * The run's search attributes: those it was started with (`start(..., { attributes })`) and the
   * changes its code made since, the same on every replay.
   *
   * @example
   * if ((this.ctx.attributes().tags as string[] | undefined)?.includes("vip")) await this.expedite();
   */
  attributes(): Readonly<Record<string, unknown>> {
    return Object.freeze({ ...this.backend.attributes() });
  }

  /**
   * Starts a child workflow run; resolves once its start is durable.
   *
   * @example
   * const child = await this.ctx.startChild("Ship", `ship-${id}`, order, { close: "abandon" });
   * const label = await child.result();
   */
  startChild<C extends WorkflowClass>(
    type: C,
    id: string,
    ...args: InputArgs<C, [options?: ChildOptions]>
  ): Promise<ChildHandle<WorkflowOutput<C>>>;
  startChild<T = unknown>(type: string, id: string, input?: unknown, options?: ChildOptions): Promise<ChildHandle<T>>;
  startChild(type: string | WorkflowClass, id: string, input?: unknown, options: ChildOptions = {}): Promise<ChildHandle<unknown>> {
    const name = typeof type === "string" ? type : workflowName(type);
    checkWorkflowId(id, "child workflow ID");
    const timeoutMs = options.timeout === undefined ? undefined : toMillis(options.timeout, "child timeout");
    const close = options.close ?? "terminate";
    if (!["terminate", "request-cancel", "abandon"].includes(close)) {
      throw new RejectedError(`child close policy must be 'terminate', 'request-cancel' or 'abandon'; got '${String(close)}'`);
    }
    return this.backend.startChild(name, id, input, { close, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
  }

  /**
   * Starts a child workflow run and waits for its result; given the class, input and result are
   * checked against its `run`.
   *
   * @example
   * const label: string = await this.ctx.executeChild(Ship, `ship-${id}`, order);
   */
  executeChild<C extends WorkflowClass>(type: C, id: string, ...args: InputArgs<C, [options?: ChildOptions]>): Promise<WorkflowOutput<C>>;
  executeChild<T = unknown>(type: string, id: string, input?: unknown, options?: ChildOptions): Promise<T>;
  async executeChild(type: string | WorkflowClass, id: string, input?: unknown, options: ChildOptions = {}): Promise<unknown> {
    const child = await this.startChild(type as string, id, input, options);
    return child.result();
  }

  /**
   * Ends this run and starts a fresh one of the same workflow ID with `input` and an empty journal.
   * The returned promise never resolves: return it from `run()`.
   *
   * Nothing sent to the ID is lost on the way: signals no `waitFor` took, updates whose handler had
   * not finished, a cancellation the code was not told of, and whatever arrives while the next run
   * starts are applied by the next run. Its search attributes are this run's unless
   * `options.attributes` replaces them, and its children are closed by their close policies, as when
   * a run ends.
   *
   * @example
   * if (this.ctx.journalSize() > 1_000) return this.ctx.continueAsNew(this.total, { attributes: { phase: "next" } });
   */
  continueAsNew(...args: InputArgs<W, [options?: ContinueAsNewOptions]>): Promise<never> {
    const options = (args[1] ?? {}) as ContinueAsNewOptions;
    checkStartAttributes(options, "ctx.continueAsNew");
    return this.backend.continueAsNew(args[0], options.attributes === undefined ? undefined : { ...options.attributes });
  }

  /**
   * Waits for an outside party: `send` runs as a retried step with a fresh token each attempt, and the
   * run waits until `engine.complete(token, value)` (or `engine.fail`) answers the token that was sent,
   * or until `waitTimeout` passes (a `TimeoutError`).
   *
   * @example
   * const verdict = await this.ctx.awaitCompletion<string>("ask-reviewer", ({ token }) => mail.send(token), { waitTimeout: "2 days" });
   */
  awaitCompletion<T = unknown>(
    name: string,
    send: (c: Completion) => Promise<unknown> | unknown,
    options: AwaitCompletionOptions = {},
  ): Promise<T> {
    checkName(name, "step name");
    const { waitTimeout, ...stepOptions } = options;
    checkStepOptions(stepOptions, `ctx.awaitCompletion('${name}')`);
    const waitMs = waitTimeout === undefined ? undefined : toMillis(waitTimeout, `ctx.awaitCompletion('${name}') waitTimeout`);
    return this.backend.awaitCompletion(name, send, stepOptions, waitMs) as Promise<T>;
  }

  /**
   * Starts an independent run of another workflow (not a child: it outlives this run and has no
   * close policy), subject to `options.idPolicy`. Sent by a step of this run and applied once by the
   * target however often this run restarts; resolves once the start is durable, and rejects with
   * `AlreadyExistsError` when the ID's policy refuses it.
   *
   * @example
   * await this.ctx.startWorkflow(Invoice, `invoice-${orderId}`, { orderId }, { idPolicy: { running: "use-existing" } });
   */
  startWorkflow<C extends WorkflowClass>(type: C, id: string, ...args: InputArgs<C, [options?: StartOptions]>): Promise<void>;
  startWorkflow(type: string, id: string, input?: unknown, options?: StartOptions): Promise<void>;
  async startWorkflow(type: string | WorkflowClass, id: string, input?: unknown, options: StartOptions = {}): Promise<void> {
    const name = typeof type === "string" ? checkName(type, "workflow type") : workflowName(type);
    checkWorkflowId(id, "ctx.startWorkflow ID");
    checkStartAttributes(options, "ctx.startWorkflow");
    await this.send(id, { op: "start", type: name, input, options });
  }

  /**
   * Signals the run of another workflow, exactly once: the signal is sent by a step of this run and
   * the target ignores a repeat after a restart. Rejects with `NotFoundError` when the ID has no run.
   */
  async signalWorkflow(id: string, signal: string, arg?: unknown): Promise<void> {
    checkWorkflowId(id, "ctx.signalWorkflow ID");
    checkName(signal, "signal name");
    await this.send(id, { op: "signal", name: signal, value: arg });
  }

  /** Asks the run of another workflow to cancel, exactly once (see {@link signalWorkflow}). */
  async cancelWorkflow(id: string, reason = `cancelled by ${this.backend.workflowId}`): Promise<void> {
    checkWorkflowId(id, "ctx.cancelWorkflow ID");
    await this.send(id, { op: "cancel", reason: String(reason) });
  }

  /**
   * Sends an update to the run of another workflow and waits for its result, which is journaled in
   * this run: the target applies the update once, and replay answers from this run's journal.
   * A validator's refusal or the handler's error rejects here.
   */
  async updateWorkflow<R = unknown>(id: string, update: string, arg?: unknown): Promise<R> {
    checkWorkflowId(id, "ctx.updateWorkflow ID");
    checkName(update, "update name");
    return (await this.send(id, { op: "update", name: update, arg })) as R;
  }

  /**
   * Starts the ID's run with a signal in its start record, or signals its running run: one message,
   * applied once. The way to reach a workflow that may not run yet (a mutex, a queue).
   *
   * @example
   * await this.ctx.signalWithStart(Mutex, "mutex-printer", undefined, "acquire", this.ctx.workflowId);
   */
  signalWithStart<C extends WorkflowClass>(
    type: C,
    id: string,
    input: WorkflowInput<C>,
    signal: string,
    arg?: unknown,
    options?: StartOptions,
  ): Promise<void>;
  signalWithStart(type: string, id: string, input: unknown, signal: string, arg?: unknown, options?: StartOptions): Promise<void>;
  async signalWithStart(
    type: string | WorkflowClass,
    id: string,
    input: unknown,
    signal: string,
    arg?: unknown,
    options: StartOptions = {},
  ): Promise<void> {
    const name = typeof type === "string" ? checkName(type, "workflow type") : workflowName(type);
    checkWorkflowId(id, "ctx.signalWithStart ID");
    checkName(signal, "signal name");
    checkStartAttributes(options, "ctx.signalWithStart");
    await this.send(id, { op: "signal-with-start", type: name, input, name: signal, value: arg, options });
  }

  private send(target: string, message: Message): Promise<unknown> {
    if (scopeOf(this.backend) !== undefined) {
      throw new RejectedError(`${message.op} messages are sent from workflow code, not from inside a step of ${this.backend.workflowId}`);
    }
    return this.backend.send(target, message);
  }

  /** Records in the current run's journal so far. */
  journalSize(): number {
    return this.backend.journalSize();
  }

  private scope(what: string): StepScope {
    const s = scopeOf(this.backend);
    if (s === undefined)
      throw new RejectedError(`ctx.${what} is only available inside a running step of ${this.backend.workflowId}`, {
        reason: "outside-step",
      });
    return s;
  }
}
