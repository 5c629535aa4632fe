/*
 * What a lease schedule must leave behind, whatever the timing: the properties the stored rows,
 * the audit of inserts and the recorded outcome of every append are checked against.
 */
import type { LeaseRun } from "./lease-simulator.js";

export const LEASE_PROPERTIES = {
  acked: "every acknowledged append is stored, exactly once",
  notStored: "no append refused with ShardMovedError (which says nothing was stored) is stored",
  atMostOnce: "no entry is stored twice, and nothing is stored that was never appended",
  order: "a writer's entries on a shard are stored in the order it appended them",
  fencing: "every batch row was inserted by the owner the shard's lease row named in the inserting transaction",
} as const;
export type LeaseProperty = keyof typeof LEASE_PROPERTIES;

export interface LeaseViolation {
  readonly property: LeaseProperty;
  readonly detail: string;
}

/** Every violation in `run`, at most a few per property. */
export function leaseViolations(run: LeaseRun): LeaseViolation[] {
  const out: LeaseViolation[] = [];
  const stored = new Map<string, number>();
  for (const e of run.stored) stored.set(e.body, (stored.get(e.body) ?? 0) + 1);
  const appended = new Map(run.appends.map((a) => [a.body, a]));

  for (const a of run.appends) {
    const times = stored.get(a.body) ?? 0;
    if (a.outcome === "acked" && times !== 1)
      out.push({ property: "acked", detail: `${a.body} on shard ${a.shard} was acknowledged and is stored ${times} times` });
    if (a.outcome === "moved" && times > 0)
      out.push({
        property: "notStored",
        detail: `${a.body} on shard ${a.shard} (epoch ${a.epoch}) was refused (${a.error}) yet is stored`,
      });
  }
  for (const [body, times] of stored) {
    if (times > 1) out.push({ property: "atMostOnce", detail: `${body} is stored ${times} times` });
    if (!appended.has(body)) out.push({ property: "atMostOnce", detail: `${body} is stored but was never appended` });
  }
  // Bodies are `owner#n`, n counting the owner's appends: on one shard, n must grow with seq.
  const last = new Map<string, { n: number; seq: number }>();
  for (const e of run.stored) {
    const [owner, n] = e.body.split("#") as [string, string];
    const key = `${e.shard}/${owner}`;
    const before = last.get(key);
    if (before !== undefined && Number(n) < before.n)
      out.push({
        property: "order",
        detail: `${e.body} is stored at seq ${e.seq} of shard ${e.shard}, after ${owner}#${before.n} at seq ${before.seq}`,
      });
    last.set(key, { n: Number(n), seq: e.seq });
  }
  for (const r of run.audit) {
    if (r.writer !== `fusee ${r.leaseOwner ?? ""}`)
      out.push({
        property: "fencing",
        detail: `shard ${r.shard} seq ${r.seq} was inserted by "${r.writer}" while the lease row named "${r.leaseOwner}"`,
      });
  }
  const kept = new Map<LeaseProperty, number>();
  return out.filter((v) => {
    const n = (kept.get(v.property) ?? 0) + 1;
    kept.set(v.property, n);
    return n <= 5;
  });
}
