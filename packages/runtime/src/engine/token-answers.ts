import { NotFoundError, RejectedError } from "../core/errors.js";
import type { CompletionRecord } from "../journal/records.js";
import { parseCompletionToken } from "../workflow/completion-token.js";
import type { RunAccess } from "./run-access.js";
import type { RunEntry } from "./run-entry.js";

/** What answering a completion token needs of the runs. */
export interface TokenAnswerDeps {
  readonly access: Pick<RunAccess, "held" | "onRun" | "idleExecutor" | "replacing">;
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
  deps.access.held(address.workflowId);
  for (;;) {
    const answered = await deps.access
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
        const executor = await deps.access.idleExecutor(entry);
        // The run may have begun to be replaced meanwhile: ask again, of the run that replaces it.
        if (deps.access.replacing(entry.id) || entry.executor !== executor) return false;
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
