import type { Recurrence } from "../journal/recurrence.js";
import type { RecurrenceSpec, ScheduleCoverage } from "../journal/schedule-coverage.js";

/** The instants of a backfill a page starts, and the last instant the page stands for once recorded. */
export interface BackfillPage {
  readonly instants: number[];
  readonly through: number;
}

/**
 * The next page of a backfill over `[from, to]` of `recurrence`: at most `size` instants no record
 * covers (under `spec`, the spec the backfill was asked under) and no start holds (`claimed`).
 * Covered spans are stepped over whole, so a page costs its instants, not the range's.
 */
export function backfillPage(
  recurrence: Recurrence,
  covered: ScheduleCoverage,
  claimed: ReadonlySet<number>,
  range: { readonly from: number; readonly to: number; readonly spec: RecurrenceSpec | undefined },
  size: number,
): BackfillPage {
  const instants: number[] = [];
  for (let t = recurrence.next(range.from - 1); t !== undefined && t <= range.to;) {
    const end = covered.endOf(t, range.spec);
    if (end !== undefined) {
      t = recurrence.next(end);
      continue;
    }
    if (!claimed.has(t)) {
      instants.push(t);
      if (instants.length === size) return { instants, through: t };
    }
    t = recurrence.next(t);
  }
  return { instants, through: range.to };
}
