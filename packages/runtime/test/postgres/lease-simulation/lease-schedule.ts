/*
 * The seeded schedules of the lease simulation: how many writers share one PostgreSQL schema, how
 * many shards and how long a lease lasts, and the appends, renewals, takeovers, stalls and restarts
 * the harness performs, in order, with the gaps between them. Everything here is a pure function of
 * the seed.
 */

import { Seeded } from "../../support/seeded.js";

/** What the harness does next; `writer` is a slot, whose log is replaced by a restart. */
export type LeaseAction =
  /** The writer appends `entries` entries to the shard, without waiting for them. */
  | { readonly kind: "append"; readonly writer: number; readonly shard: number; readonly entries: number }
  /** The writer renews the leases it holds (a lost one stops its shard). */
  | { readonly kind: "renew"; readonly writer: number }
  /** The writer renews, then takes free or expired shards up to its fair share (or gives extras back). */
  | { readonly kind: "rebalance"; readonly writer: number }
  /**
   * A statement delayed in the database: the harness locks the shard's lease row (and writes it, so
   * a statement that waited reads it again), the lease holder appends `entries` entries, whose
   * statement waits on the row, and the row is let go after `ms`, past the lease or not.
   */
  | { readonly kind: "stall"; readonly shard: number; readonly entries: number; readonly ms: number }
  /** Nothing happens for `ms`: leases not renewed run out. */
  | { readonly kind: "wait"; readonly ms: number }
  /** The writer's log closes (giving its leases back) and a new one, under a new owner name, opens in its slot. */
  | { readonly kind: "restart"; readonly writer: number };

export interface LeaseSchedule {
  readonly seed: number;
  readonly writers: number;
  readonly shards: number;
  readonly leaseMs: number;
  /** Each action with the milliseconds the harness waits before it. */
  readonly steps: ReadonlyArray<{ readonly gapMs: number; readonly action: LeaseAction }>;
}

/** The schedule of `seed`: `actions` steps (30 by default). */
export function leaseSchedule(seed: number, actions = 30): LeaseSchedule {
  const r = new Seeded(seed);
  const writers = r.int(2, 3);
  const shards = r.int(2, 4);
  const leaseMs = r.pick([200, 300]);
  const steps: { gapMs: number; action: LeaseAction }[] = [];
  const writer = (): number => r.int(0, writers - 1);
  for (let i = 0; i < actions; i++) {
    const roll = r.next();
    let action: LeaseAction;
    if (roll < 0.35) action = { kind: "append", writer: writer(), shard: r.int(0, shards - 1), entries: r.int(1, 4) };
    else if (roll < 0.57) action = { kind: "renew", writer: writer() };
    else if (roll < 0.72) action = { kind: "rebalance", writer: writer() };
    // A stall shorter than a lease, or longer than one or two: only the longer ones outlast the lease.
    else if (roll < 0.87)
      action = { kind: "stall", shard: r.int(0, shards - 1), entries: r.int(1, 3), ms: Math.round(leaseMs * r.pick([0.4, 1.5, 2.2])) };
    else if (roll < 0.95) action = { kind: "wait", ms: Math.round(leaseMs * r.pick([0.3, 1.2])) };
    else action = { kind: "restart", writer: writer() };
    steps.push({ gapMs: r.int(0, 20), action });
  }
  return { seed, writers, shards, leaseMs, steps };
}

/** The schedule as text, one step a line, for a failure's report. */
export function leaseScheduleText(s: LeaseSchedule): string {
  const head = `seed ${s.seed}: ${s.writers} writers, ${s.shards} shards, lease ${s.leaseMs} ms`;
  return [head, ...s.steps.map((st, i) => `  ${i}. +${st.gapMs} ms ${JSON.stringify(st.action)}`)].join("\n");
}
