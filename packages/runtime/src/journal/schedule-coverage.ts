import { CoveredRanges } from "./covered-ranges.js";
import { recurrenceOf, type Recurrence } from "./recurrence.js";

/** The fields of a schedule's spec that give its instants. */
export interface RecurrenceSpec {
  readonly everyMs?: number;
  readonly cron?: string;
  readonly timezone?: string;
}

/** The ranges covered under an earlier spec, as a state record keeps them. */
export interface EarlierCoverage {
  readonly spec: RecurrenceSpec;
  readonly covered: readonly (readonly [number, number])[];
}

interface Layer {
  readonly spec: RecurrenceSpec;
  readonly recurrence: Recurrence;
  readonly ranges: CoveredRanges;
}

/** The recurrence of a spec's instant fields. */
export function recurrenceOfSpec(spec: RecurrenceSpec): Recurrence {
  return recurrenceOf({ everyMs: spec.everyMs, cron: spec.cron, timezone: spec.timezone });
}

/** Whether two specs give the same instants. */
export function sameRecurrence(a: RecurrenceSpec, b: RecurrenceSpec): boolean {
  return a.everyMs === b.everyMs && a.cron === b.cron && a.timezone === b.timezone;
}

/** The instant fields of a spec alone, without the absent ones (as a record keeps them). */
export function recurrenceSpec(s: RecurrenceSpec): RecurrenceSpec {
  return {
    ...(s.everyMs !== undefined ? { everyMs: s.everyMs } : {}),
    ...(s.cron !== undefined ? { cron: s.cron } : {}),
    ...(s.timezone !== undefined ? { timezone: s.timezone } : {}),
  };
}

/**
 * The instants a schedule dealt with, across the specs it had. A range merges over the gaps between
 * the instants of the spec it was built under, so it says nothing of another spec's instants inside
 * it: each spec keeps its own ranges, and an instant inside a range of another spec counts as dealt
 * with only when it is an instant of that spec or an end of the range.
 */
export class ScheduleCoverage {
  private readonly layers: Layer[] = [];
  private spec: RecurrenceSpec;

  constructor(spec: RecurrenceSpec, current: readonly (readonly [number, number])[] = [], earlier: readonly EarlierCoverage[] = []) {
    this.spec = recurrenceSpec(spec);
    this.layers.push({ spec: this.spec, recurrence: recurrenceOfSpec(this.spec), ranges: new CoveredRanges(current) });
    for (const e of earlier) this.layers.push({ spec: e.spec, recurrence: recurrenceOfSpec(e.spec), ranges: new CoveredRanges(e.covered) });
  }

  has(t: number): boolean {
    return this.endOf(t) !== undefined;
  }

  /**
   * Where a walk over the instants of `spec` (the current one by default) may go on from when `t` is
   * dealt with: the end of that spec's range holding it, or `t` itself when another spec dealt with
   * it; `undefined` when none did.
   */
  endOf(t: number, spec: RecurrenceSpec = this.spec): number | undefined {
    let found: number | undefined;
    for (const layer of this.layers) {
      const r = layer.ranges.rangeOf(t);
      if (r === undefined) continue;
      if (sameRecurrence(layer.spec, spec)) return r[1];
      if (t === r[0] || t === r[1] || layer.recurrence.latest(t) === t) found = t;
    }
    return found;
  }

  /** Covers `[first, last]` under `spec` (the current one by default), whose instants decide merges. */
  add(first: number, last: number, spec: RecurrenceSpec = this.spec): void {
    const layer = this.layerOf(spec);
    layer.ranges.add(first, last, (t) => layer.recurrence.next(t));
  }

  /** The spec changed: what is covered from now on is covered under `spec`. */
  changed(spec: RecurrenceSpec): void {
    this.spec = recurrenceSpec(spec);
    const layer = this.layerOf(this.spec);
    // The current spec's ranges come first, as a snapshot keeps them.
    this.layers.splice(this.layers.indexOf(layer), 1);
    this.layers.unshift(layer);
  }

  /** The current spec's ranges. */
  list(): Array<[number, number]> {
    return (this.layers[0] as Layer).ranges.list();
  }

  /** The earlier specs' ranges, for a snapshot; empty when the spec never changed. */
  earlierList(): EarlierCoverage[] {
    return this.layers
      .slice(1)
      .filter((l) => l.ranges.size > 0)
      .map((l) => ({ spec: l.spec, covered: l.ranges.list() }));
  }

  private layerOf(spec: RecurrenceSpec): Layer {
    let layer = this.layers.find((l) => sameRecurrence(l.spec, spec));
    if (layer === undefined) {
      layer = { spec: recurrenceSpec(spec), recurrence: recurrenceOfSpec(spec), ranges: new CoveredRanges() };
      this.layers.push(layer);
    }
    return layer;
  }
}
