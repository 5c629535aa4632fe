/**
 * The instants a schedule has dealt with, as disjoint time ranges `[first, last]`, ascending.
 * Two ranges merge when no instant of the schedule lies between them, so a schedule that runs for
 * years, or a backfill of a million instants, keeps a handful of ranges rather than every instant.
 */
export class CoveredRanges {
  private ranges: Array<[number, number]>;

  constructor(ranges: readonly (readonly [number, number])[] = []) {
    this.ranges = ranges.map(([a, b]) => [a, b]);
  }

  /** The ranges, for a snapshot. */
  list(): Array<[number, number]> {
    return this.ranges.map(([a, b]) => [a, b]);
  }

  get size(): number {
    return this.ranges.length;
  }

  /** The end of the range holding `t`, or `undefined` when `t` is not covered. */
  endOf(t: number): number | undefined {
    const i = this.indexAtOrBefore(t);
    const r = i < 0 ? undefined : this.ranges[i];
    return r !== undefined && t <= r[1] ? r[1] : undefined;
  }

  /** The range holding `t`, or `undefined` when `t` is not covered. */
  rangeOf(t: number): readonly [number, number] | undefined {
    const r = this.ranges[this.indexAtOrBefore(t)];
    return r !== undefined && t <= r[1] ? r : undefined;
  }

  has(t: number): boolean {
    return this.endOf(t) !== undefined;
  }

  /** Covers `[first, last]`; `next(t)` (the schedule's next instant after `t`) decides merges. */
  add(first: number, last: number, next: (t: number) => number | undefined): void {
    let lo = first;
    let hi = last;
    let start = this.indexAtOrBefore(first);
    if (start < 0) start = 0;
    const out: Array<[number, number]> = this.ranges.slice(0, start);
    let i = start;
    for (; i < this.ranges.length; i++) {
      const r = this.ranges[i] as [number, number];
      if (r[1] < lo && !gapless(r[1], lo, next)) {
        out.push(r);
        continue;
      }
      if (r[0] > hi && !gapless(hi, r[0], next)) break;
      lo = Math.min(lo, r[0]);
      hi = Math.max(hi, r[1]);
    }
    out.push([lo, hi]);
    for (; i < this.ranges.length; i++) out.push(this.ranges[i] as [number, number]);
    this.ranges = out;
  }

  /** Index of the last range starting at or before `t`, or -1. */
  private indexAtOrBefore(t: number): number {
    let lo = 0;
    let hi = this.ranges.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((this.ranges[mid] as [number, number])[0] <= t) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }
}

/** True when no instant lies strictly between `a` and `b` (a < b). */
function gapless(a: number, b: number, next: (t: number) => number | undefined): boolean {
  const n = next(a);
  return n === undefined || n >= b;
}
