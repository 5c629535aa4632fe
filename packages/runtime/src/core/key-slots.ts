/**
 * Strings numbered by small-integer slots, found by an open-addressing hash table of typed arrays.
 *
 * It stands in for a `Map<string, number>` where every key costs: the indexes of a data directory
 * hold one key per run (its ID, its stream), and a `Map` entry (key, value and chain pointers in a
 * table grown by doubling) costs 40-60 bytes besides the string. Here a key costs its pointer in
 * the slot array, its hash and about two table cells: 20-30 bytes. Callers keep what they know of
 * a key in typed arrays of their own, indexed by its slot; a freed slot is reused, lowest
 * recently freed first.
 */
export class KeySlots {
  /** Per slot: its key, or `undefined` once freed. */
  private readonly keyOf: (string | undefined)[] = [];
  /** Per slot: its key's hash; for a freed slot, the next free slot (-1: none). */
  private hashes = new Int32Array(64);
  /** Open addressing, linear probing: slot + 1 per cell, 0 for empty, -1 for a deleted key. */
  private table = new Int32Array(128);
  private live = 0;
  /** Cells that are not empty: live keys and deletion marks, which probes step over. */
  private used = 0;
  private freeSlot = -1;

  /** Keys held. */
  get size(): number {
    return this.live;
  }

  /** One past the highest slot ever given: a bound for arrays indexed by slot. */
  get slotLimit(): number {
    return this.keyOf.length;
  }

  /** The slot of `key`, or -1. */
  get(key: string): number {
    const table = this.table;
    const mask = table.length - 1;
    const h = hashOf(key);
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const cell = table[i]!;
      if (cell === 0) return -1;
      if (cell > 0 && this.hashes[cell - 1] === h && this.keyOf[cell - 1] === key) return cell - 1;
    }
  }

  /** The key in `slot`, or `undefined` when the slot is free. */
  keyAt(slot: number): string | undefined {
    return this.keyOf[slot];
  }

  /** Gives `key`, which must not be held yet, a slot and returns it. */
  add(key: string): number {
    if ((this.used + 1) * 2 > this.table.length) this.rebuild();
    const h = hashOf(key);
    let slot = this.freeSlot;
    if (slot >= 0) {
      this.freeSlot = this.hashes[slot]!;
      this.keyOf[slot] = key;
    } else {
      slot = this.keyOf.length;
      this.keyOf.push(key);
      if (slot === this.hashes.length) {
        const hashes = new Int32Array(slot * 2);
        hashes.set(this.hashes);
        this.hashes = hashes;
      }
    }
    this.hashes[slot] = h;
    const table = this.table;
    const mask = table.length - 1;
    let i = h & mask;
    while (table[i]! > 0) i = (i + 1) & mask;
    if (table[i] === 0) this.used += 1;
    table[i] = slot + 1;
    this.live += 1;
    return slot;
  }

  /** Frees the slot of `key` and returns it, or -1 when the key is not held. */
  delete(key: string): number {
    const table = this.table;
    const mask = table.length - 1;
    const h = hashOf(key);
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const cell = table[i]!;
      if (cell === 0) return -1;
      if (cell > 0 && this.hashes[cell - 1] === h && this.keyOf[cell - 1] === key) {
        const slot = cell - 1;
        table[i] = -1;
        this.keyOf[slot] = undefined;
        this.hashes[slot] = this.freeSlot;
        this.freeSlot = slot;
        this.live -= 1;
        return slot;
      }
    }
  }

  /** The keys held, by slot. */
  keys(): string[] {
    const out: string[] = [];
    for (const key of this.keyOf) if (key !== undefined) out.push(key);
    return out;
  }

  /** A table sized for three times the live keys at least, without deletion marks. */
  private rebuild(): void {
    let n = this.table.length;
    while ((this.live + 1) * 3 > n) n *= 2;
    const table = new Int32Array(n);
    const mask = n - 1;
    for (let slot = 0; slot < this.keyOf.length; slot++) {
      if (this.keyOf[slot] === undefined) continue;
      let i = this.hashes[slot]! & mask;
      while (table[i] !== 0) i = (i + 1) & mask;
      table[i] = slot + 1;
    }
    this.table = table;
    this.used = this.live;
  }
}

/** FNV-1a over the string's UTF-16 code units. */
function hashOf(key: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  // Linear probing wants the low bits mixed.
  h ^= h >>> 15;
  return Math.imul(h, 0x2c1b3c6d) ^ (h >>> 12);
}
