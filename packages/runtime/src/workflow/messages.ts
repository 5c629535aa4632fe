/*
 * Messages from workflow code to other workflows (`ctx.startWorkflow`, `ctx.signalWorkflow`,
 * `ctx.cancelWorkflow`, `ctx.updateWorkflow`, `ctx.signalWithStart`). Each is sent by a step of the
 * sender whose idempotency key is the message's request ID, and the target applies a request ID
 * once: a sender that restarts before its step's record re-sends, and the target ignores the copy,
 * so every message takes effect exactly once.
 */
import type { StartOptions } from "../client/types.js";

/** What a message asks of its target, as plain values (it may travel to another process). */
export type Message =
  | { readonly op: "start"; readonly type: string; readonly input: unknown; readonly options: StartOptions }
  | { readonly op: "signal"; readonly name: string; readonly value: unknown }
  | { readonly op: "cancel"; readonly reason: string }
  | { readonly op: "update"; readonly name: string; readonly arg: unknown }
  | {
      readonly op: "signal-with-start";
      readonly type: string;
      readonly input: unknown;
      readonly name: string;
      readonly value: unknown;
      readonly options: StartOptions;
    };
