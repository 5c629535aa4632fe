import type { LogLevel } from "../core/logger.js";
import type { ChildHandle, ChildOptions, Completion } from "./ctx-options.js";
import type { Message } from "./messages.js";
import type { StepOptions } from "./step-options.js";
import type { LogFields } from "./workflow-log.js";

/** What a {@link Ctx} delegates to: the executor of the run. */
export interface CtxBackend {
  readonly workflowId: string;
  readonly workflowType: string;
  runId(): number;
  now(): number;
  random(): number;
  uuid(): string;
  /** `args`: the fingerprint of a `@Step` method call's arguments (see `fingerprintArgs`). */
  step(name: string, fn: () => unknown, options: StepOptions, args?: string): Promise<unknown>;
  sleepUntil(ms: number): Promise<void>;
  waitFor(name: string, timeoutMs: number | undefined): Promise<unknown>;
  condition(pred: () => boolean, timeoutMs: number | undefined): Promise<boolean>;
  patched(id: string, deprecated: boolean): boolean;
  setAttributes(attributes: Record<string, unknown>, removed?: readonly string[]): void;
  attributes(): Readonly<Record<string, unknown>>;
  journalSize(): number;
  startChild(type: string, id: string, input: unknown, options: ChildOptions): Promise<ChildHandle<unknown>>;
  continueAsNew(input: unknown, attributes?: Readonly<Record<string, unknown>>): Promise<never>;
  awaitCompletion(
    name: string,
    send: (c: Completion) => unknown,
    options: StepOptions,
    waitTimeoutMs: number | undefined,
  ): Promise<unknown>;
  send(target: string, message: Message): Promise<unknown>;
  log(level: LogLevel, message: string, fields: LogFields | undefined): void;
}
