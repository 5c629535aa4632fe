import { NotFoundError, RejectedError } from "../core/errors.js";
import type { CompletionRecord } from "../journal/records.js";
import { parseCompletionToken } from "../workflow/completion-token.js";
import type { RunExecutor } from "../workflow/run-executor.js";
import type { RunEntry } from "./run-entry.js";

/** What answering a completion token needs of the runs. */
export interface TokenAnswerDeps {
  /** Refuses a workflow ID whose shard this process does not hold. */
  held(id: string): void;
  /**
   * Calls `call` on the run of `id` once no replacement of it is under way, in the same turn;
   * `undefined` without calling it when `request` was performed already.
   */
  onRun<T>(id: string, request: string | undefined, call: (entry: RunEntry) => Promise<T>): Promise<T | undefined>;
  /** Whether a replacement of the run of `id` began. */
  replacing(id: string): boolean;
  /** The run's executor once every record delivered so far has been applied. */
  idleExecutor(entry: RunEntry): Promise<RunExecutor>;
  append(entry: RunEntry, record: CompletionRecord, request: string | undefined): Promise<void>;
  now(): number;
}

/**
 * Journals the answer to a token `ctx.awaitCompletion` sent (`engine.complete` or `engine.fail`),
 * once, and only to the run and attempt the token belongs to; anything else is a `RejectedError`
 * whose reason says why (`invalid-token`, `stale-token`, `token-used`, `already-finished`).
 */
export async function answerToken(
  deps: TokenAnswerDeps,
  token: string,
  outcome: { ok: true; value: unknown } | { ok: false; error: Error },
  request: string | undefined,
): Promise<void> {
  const address = parseCompletionToken(token);
  deps.held(address.workflowId);
  for (;;) {
    const answered = await deps
      .onRun(address.workflowId, request, async (entry) => {
        if (entry.runId !== address.runId) {
          throw new RejectedError(`the token belongs to run ${address.runId} of '${entry.id}', which was replaced by run ${entry.runId}`, {
            reason: "stale-token",
          });
        }
        if (entry.finished !== undefined)
          throw new RejectedError(`run ${entry.runId} of '${entry.id}' has finished (${entry.finished}); the token is no longer valid`, {
            reason: "already-finished",
          });
        const executor = await deps.idleExecutor(entry);
        // The run may have begun to be replaced meanwhile: ask again, of the run that replaces it.
        if (deps.replacing(entry.id) || entry.executor !== executor) return false;
        const state = executor.completionState(token);
        if (state === "used") throw new RejectedError(`the token of '${entry.id}' was already answered`, { reason: "token-used" });
        if (state === "unknown")
          throw new RejectedError(`the token is not the one '${entry.id}' is waiting for (a token of an earlier attempt is stale)`, {
            reason: "stale-token",
          });
        executor.claimCompletion(token);
        await deps.append(entry, { kind: "completion", token, ...outcome, at: deps.now() }, request);
        return true;
      })
      .catch((e: unknown) => {
        if (e instanceof NotFoundError)
          throw new RejectedError(`the token belongs to workflow '${address.workflowId}', which has no run`, { reason: "invalid-token" });
        throw e;
      });
    if (answered !== false) return;
  }
}
