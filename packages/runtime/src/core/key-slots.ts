/**
 * Values numbered by small-integer slots and found by a string key they carry, through an
 * open-addressing hash table of typed arrays.
 *
 * It stands in for a `Map<string, V>` where every key costs: the indexes of a data directory hold
 * one key per run (its ID, its stream), and a `Map` entry (key, value and chain pointers in a table
 * grown by doubling) costs about 37 bytes besides the string. Here a value costs its pointer in the
 * slot array, its key's hash and about two table cells, 20-30 bytes, and the key is read from the
 * value rather than kept beside it. Callers may keep more of a value in typed arrays of their own,
 * indexed by its slot; a freed slot is reused, the one most recently freed first.
 */
export class KeySlots<V> {
  /** Per slot: its value, or `undefined` once freed. */
  private readonly values: (V | undefined)[] = [];
  /** Per slot: its key's hash; for a freed slot, the next free slot (-1: none). */
  private hashes = new Int32Array(64);
  /** Open addressing, linear probing: slot + 1 per cell, 0 for empty, -1 for a deleted key. */
  private table = new Int32Array(128);
  private live = 0;
  /** Cells that are not empty: live keys and deletion marks, which probes step over. */
  private used = 0;
  private freeSlot = -1;

  constructor(
    /** The key of a value; it must not change while the value is held. */
    private readonly keyOf: (value: V) => string,
  ) {}

  /** Values held. */
  get size(): number {
    return this.live;
  }

  /** One past the highest slot ever given: a bound for arrays indexed by slot. */
  get slotLimit(): number {
    return this.values.length;
  }

  /** The slot of the value whose key is `key`, or -1. */
  get(key: string): number {
    const i = this.cellOf(key);
    return i < 0 ? -1 : this.table[i]! - 1;
  }

  /** The table cell that holds `key`'s slot, or -1. */
  private cellOf(key: string): number {
    const table = this.table;
    const mask = table.length - 1;
    const h = hashOf(key);
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const cell = table[i]!;
      if (cell === 0) return -1;
      if (cell > 0 && this.hashes[cell - 1] === h && this.keyOf(this.values[cell - 1]!) === key) return i;
    }
  }

  /** The value in `slot`, or `undefined` when the slot is free. */
  at(slot: number): V | undefined {
    return this.values[slot];
  }

  /** Puts `value` in place of the one in `slot`, which has the same key. */
  replace(slot: number, value: V): void {
    this.values[slot] = value;
  }

  /** Gives `value`, whose key must not be held yet, a slot and returns it. */
  add(value: V): number {
    if ((this.used + 1) * 2 > this.table.length) this.rebuild();
    const h = hashOf(this.keyOf(value));
    let slot = this.freeSlot;
    if (slot >= 0) {
      this.freeSlot = this.hashes[slot]!;
      this.values[slot] = value;
    } else {
      slot = this.values.length;
      this.values.push(value);
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

  /** Frees the slot of the value whose key is `key` and returns it, or -1 when none is held. */
  delete(key: string): number {
    const i = this.cellOf(key);
    if (i < 0) return -1;
    const slot = this.table[i]! - 1;
    this.table[i] = -1;
    this.values[slot] = undefined;
    this.hashes[slot] = this.freeSlot;
    this.freeSlot = slot;
    this.live -= 1;
    return slot;
  }

  /** The values held, by slot; one deleted while this runs is not visited, one added may be. */
  *each(): IterableIterator<V> {
    const values = this.values;
    for (let slot = 0; slot < values.length; slot++) {
      const value = values[slot];
      if (value !== undefined) yield value;
    }
  }

  /** A table sized for three times the live keys at least, without deletion marks. */
  private rebuild(): void {
    let n = this.table.length;
    while ((this.live + 1) * 3 > n) n *= 2;
    const table = new Int32Array(n);
    const mask = n - 1;
    for (let slot = 0; slot < this.values.length; slot++) {
      if (this.values[slot] === undefined) continue;
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
