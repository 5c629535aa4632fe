import { FuseeError } from "@fusee/runtime";
import type { UiActions } from "./ui-actions.js";
import { filterOf, matchesQuery, parseRunQuery } from "./run-query.js";
import { withReader, type ReaderSource } from "./routes.js";

/** What a batch does to each run it matches. */
export type BatchAction = "cancel" | "terminate";

/** A run a batch could not act on, and why. */
export interface BatchFailure {
  readonly id: string;
  readonly code: string;
  readonly message: string;
}

// Runs acted on at once: enough to keep the engine busy, few enough to leave it room for its own work.
const AT_ONCE = 16;

/**
 * Cancels or terminates every unfinished run that `filter` (the runs page's query string, its
 * cursor and page size ignored) matches when the batch starts. A run that fails (it finished
 * meanwhile, say) is reported and the others go on.
 *
 * @throws BadRequestError when the filter is not one the runs page takes.
 */
export async function runBatch(
  actions: UiActions,
  open: ReaderSource,
  filter: string,
  action: BatchAction,
  reason: string,
): Promise<{ summary: string; done: number; failed: BatchFailure[] }> {
  const query = parseRunQuery(new URLSearchParams(filter));
  const ids = await withReader(open, (reader) =>
    reader
      .list(filterOf(query), Number.MAX_SAFE_INTEGER)
      .filter((r) => r.endedAt === undefined && matchesQuery(r, query))
      .map((r) => r.id),
  );
  const failed: BatchFailure[] = [];
  let done = 0;
  for (let i = 0; i < ids.length; i += AT_ONCE) {
    await Promise.all(
      ids.slice(i, i + AT_ONCE).map(async (id) => {
        try {
          await (action === "cancel" ? actions.cancel(id, reason) : actions.terminate(id, reason));
          done++;
        } catch (e) {
          failed.push({ id, code: e instanceof FuseeError ? e.code : "FUSEE_INTERNAL", message: (e as Error)?.message ?? String(e) });
        }
      }),
    );
  }
  const verb = action === "cancel" ? "cancelled" : "terminated";
  const summary = `${verb} ${done} run${done === 1 ? "" : "s"}${failed.length > 0 ? `; ${failed.length} failed: ${failed.map((f) => `${f.id} (${f.message})`).join("; ")}` : ""}`;
  return { summary, done, failed };
}
