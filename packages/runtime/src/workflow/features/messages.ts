import { messageStepName } from "../call-table.js";
import type { Message } from "../messages.js";
import { RetryPolicy } from "../retry-policy.js";
import { scopeOf } from "../run-binding.js";
import type { StepOptions } from "../step-options.js";
import type { RunCursor } from "./run-cursor.js";

// A message is sent once per attempt of its step and never retried there: the engine forwards it
// (waiting out a shard's move), and an error the target returns (no such run, a refused update) is
// the answer, journaled as the step's failure.
const MESSAGE_STEP: StepOptions = { retry: RetryPolicy.none() };

/**
 * Sends a message to another workflow's run as a step of this run. The step's idempotency key is the
 * request ID: it stays the same when this run restarts before the step's record, and the target
 * applies a request once, so the message takes effect once.
 */
export function sendMessage(run: RunCursor, target: string, message: Message): Promise<unknown> {
  return run.step(
    messageStepName(message.op),
    () => run.host.deliver(target, message, (scopeOf(run) as { key: string }).key),
    MESSAGE_STEP,
  );
}
