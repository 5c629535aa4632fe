import { createHash } from "node:crypto";
import type { StartOptions } from "../client/types.js";
import type { Message } from "../workflow/messages.js";
import type { RequestContext } from "./run-service.js";

/** The calls a message turns into, on the runs of the process that holds its target. */
export interface MessageTargets {
  performedRequest(id: string, request: string): Promise<boolean>;
  start(type: string, id: string, input: unknown, options: StartOptions, context?: RequestContext): Promise<void>;
  signal(id: string, name: string, value: unknown, context?: RequestContext): Promise<void>;
  cancel(id: string, reason: string, context?: RequestContext): Promise<void>;
  update(id: string, name: string, arg: unknown, updateId: string): Promise<unknown>;
  signalWithStart(
    type: string,
    id: string,
    input: unknown,
    signal: string,
    value: unknown,
    options: StartOptions,
    context?: RequestContext,
  ): Promise<void>;
}

/**
 * Applies a message from another workflow to the run of `target`, once per request: a record the
 * request appended before (the sender restarted before journaling that it sent it) makes this copy
 * a no-op. An update is deduplicated by its ID, derived from the request, and answers with the
 * recorded result.
 */
export async function deliverMessage(runs: MessageTargets, target: string, message: Message, request: string): Promise<unknown> {
  if (message.op === "update") return runs.update(target, message.name, message.arg, updateIdOf(request));
  if (await runs.performedRequest(target, request)) return undefined;
  const context = { request };
  switch (message.op) {
    case "start":
      return runs.start(message.type, target, message.input, message.options, context);
    case "signal":
      return runs.signal(target, message.name, message.value, context);
    case "cancel":
      return runs.cancel(target, message.reason, context);
    case "signal-with-start":
      return runs.signalWithStart(message.type, target, message.input, message.name, message.value, message.options, context);
  }
}

/** An update ID of bounded length for a request (requests grow with the sender's workflow ID). */
function updateIdOf(request: string): string {
  return `msg-${createHash("sha256").update(request).digest("base64url").slice(0, 32)}`;
}
