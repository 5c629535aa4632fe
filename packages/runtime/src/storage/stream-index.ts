import { KeySlots } from "../core/key-slots.js";

/**
 * Where each stream's live entries lie in a shard, so `read` seeks instead of scanning.
 *
 * The index must stay small because parked runs cost their index entry only: a table of slots
 * (`KeySlots`, an open-addressing hash table in typed arrays rather than a `Map`) from key to a
 * small integer, and per-slot / per-entry fields in typed arrays. A slot holds its stream's first
 * live position itself (most streams, the journals of parked runs, hold a handful of entries) and
 * the last of the others, which are linked in a ring: the last node's next is the second entry's,
 * so one field per slot finds both ends. Besides its key string, a stream of one entry costs about
 * 45 bytes (a `Map` entry alone cost 40-60). A `number[]` per stream cost 280 bytes, an object 175.
 *
 * A position is `segment sequence * 2^32 + offset`, so positions order like the log.
 */
export class StreamIndex {
  private readonly slots = new KeySlots<string>((key) => key);
  /** Per slot: the stream's first live position. */
  private first = new Float64Array(64);
  /** Per slot: the node of its last entry, -1 when it has one. */
  private tail = new Int32Array(64);

  private pos = new Float64Array(128);
  private next = new Int32Array(128);
  private nodeTop = 0;
  private freeNode = -1;
  private live = 0;
  private dropped = 0;

  /** Live entries across all streams. */
  get liveEntries(): number {
    return this.live;
  }

  /** Whether any entry was ever dropped; until then every entry in the shard is live. */
  get hasDrops(): boolean {
    return this.dropped > 0;
  }

  get streamCount(): number {
    return this.slots.size;
  }

  keys(): string[] {
    return [...this.slots.each()];
  }

  count(key: string): number {
    const slot = this.slots.get(key);
    return slot < 0 ? 0 : this.countOf(slot);
  }

  /** Records a durable entry of `key` at `position` (positions of one key arrive in order). */
  add(key: string, position: number): void {
    const slot = this.slots.get(key);
    if (slot < 0) {
      const fresh = this.slots.add(key);
      if (fresh === this.first.length) {
        this.first = grow(this.first);
        this.tail = grow(this.tail);
      }
      this.first[fresh] = position;
      this.tail[fresh] = -1;
    } else {
      const node = this.allocNode(position);
      const tail = this.tail[slot]!;
      if (tail < 0) this.next[node] = node;
      else {
        this.next[node] = this.next[tail]!;
        this.next[tail] = node;
      }
      this.tail[slot] = node;
    }
    this.live += 1;
  }

  /** Forgets every entry of `key`; returns how many there were. */
  drop(key: string): number {
    const slot = this.slots.delete(key);
    if (slot < 0) return 0;
    const n = this.countOf(slot);
    const tail = this.tail[slot]!;
    if (tail >= 0) {
      // The ring, opened after its last node, heads the free list.
      const second = this.next[tail]!;
      this.next[tail] = this.freeNode;
      this.freeNode = second;
    }
    this.live -= n;
    this.dropped += n;
    return n;
  }

  /** Positions of the live entries of `key`, in log order. */
  positions(key: string): number[] {
    const slot = this.slots.get(key);
    if (slot < 0) return [];
    const out = [this.first[slot]!];
    const tail = this.tail[slot]!;
    if (tail >= 0) {
      let node = tail;
      do {
        node = this.next[node]!;
        out.push(this.pos[node]!);
      } while (node !== tail);
    }
    return out;
  }

  /**
   * Whether an entry of `key` read at `position` is live. Entries of a stream after its last drop
   * are exactly the live ones, so comparing with the first live position suffices.
   */
  isLive(key: string, position: number): boolean {
    const slot = this.slots.get(key);
    return slot >= 0 && position >= this.first[slot]!;
  }

  /**
   * Starts moving entries to new positions (compaction). Calls must follow log order within each
   * key; the returned function returns false when the entry is no longer live.
   */
  relocator(): (key: string, from: number, to: number) => boolean {
    // Per slot, the node last moved; FIRST for the slot's own first entry.
    const cursor = new Map<number, number>();
    return (key, from, to) => {
      const slot = this.slots.get(key);
      if (slot < 0) return false;
      let node = cursor.get(slot) ?? FIRST;
      for (;;) {
        const at = node === FIRST ? this.first[slot]! : this.pos[node]!;
        if (at === from) break;
        const tail = this.tail[slot]!;
        if (at > from || node === tail || tail < 0) return false;
        node = node === FIRST ? this.next[tail]! : this.next[node]!;
      }
      if (node === FIRST) this.first[slot] = to;
      else this.pos[node] = to;
      cursor.set(slot, node);
      return true;
    };
  }

  private countOf(slot: number): number {
    let n = 1;
    const tail = this.tail[slot]!;
    if (tail >= 0) {
      let node = tail;
      do {
        node = this.next[node]!;
        n++;
      } while (node !== tail);
    }
    return n;
  }

  private allocNode(position: number): number {
    let node: number;
    if (this.freeNode >= 0) {
      node = this.freeNode;
      this.freeNode = this.next[node]!;
    } else {
      if (this.nodeTop === this.pos.length) {
        this.pos = grow(this.pos);
        this.next = grow(this.next);
      }
      node = this.nodeTop++;
    }
    this.pos[node] = position;
    this.next[node] = -1;
    return node;
  }
}

/** The relocator's cursor at a slot's first entry, which no node holds. */
const FIRST = -2;

function grow<T extends Int32Array | Float64Array>(a: T): T {
  const b = new (a.constructor as new (n: number) => T)(a.length * 2);
  b.set(a);
  return b;
}

/** Packs a segment sequence number and an offset into one ordered position. */
export function position(seq: number, offset: number): number {
  return seq * 0x1_0000_0000 + offset;
}

export function positionSeq(pos: number): number {
  return Math.floor(pos / 0x1_0000_0000);
}

export function positionOffset(pos: number): number {
  return pos % 0x1_0000_0000;
}
