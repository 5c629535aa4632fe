/**
 * How many of `shards` shards `me` should hold when the live owners are `owners`: every owner
 * computes the same split from the same sorted list (the first `shards % n` owners take one more),
 * so the shares add up to exactly `shards` and no two owners aim at the same extra shard.
 */
export function fairShare(shards: number, owners: readonly string[], me: string): number {
  const sorted = [...new Set([...owners, me])].sort(compareOwners);
  const n = sorted.length;
  const k = sorted.indexOf(me);
  return Math.floor(shards / n) + (k < shards % n ? 1 : 0);
}

/**
 * The shards to try to take, best first: starting from this owner's own stretch of the shard
 * range, so owners taking shards at the same time mostly ask for different rows.
 */
export function candidateOrder(shards: number, owners: readonly string[], me: string, skip: ReadonlySet<number>): number[] {
  const sorted = [...new Set([...owners, me])].sort(compareOwners);
  const start = Math.floor((sorted.indexOf(me) * shards) / sorted.length);
  const out: number[] = [];
  for (let i = 0; i < shards; i++) {
    const shard = (start + i) % shards;
    if (!skip.has(shard)) out.push(shard);
  }
  return out;
}

/** Byte order, the same as `ORDER BY owner COLLATE "C"` in the database. */
function compareOwners(a: string, b: string): number {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return Buffer.compare(x, y);
}
