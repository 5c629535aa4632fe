/*
 * Where each live entry of a held shard is, kept in memory so reads and drops find a stream's
 * entries without an index on the table: a batch row holds the entries of many streams, and
 * indexing every entry on insert would cost the database as much as the rows did before.
 *
 * Entries are numbered per shard (seq). A batch row holds the entries from its own seq up to the
 * next row's, at 1-based positions; entries dropped from a row that still has live ones are listed
 * in its `dead` array.
 */

/** The live entries of one stream. */
interface StreamEntries {
  /** Entry numbers, ascending. */
  readonly seqs: number[];
  /** Bytes of the key and bodies of these entries. */
  bytes: number;
}

/** What a drop does to the rows: rows left with no live entry go, the others get positions marked dead. */
export interface DropPlan {
  /** First seq of each row to delete. */
  readonly gone: number[];
  /** Parallel arrays: a row's first seq and a 1-based position in it, per entry marked dead. */
  readonly markRows: number[];
  readonly markPositions: number[];
}

/** A batch row where at least one entry was dropped while another is still live. */
export interface PartlyDeadRow {
  readonly seq: number;
  readonly entries: number;
  readonly live: number;
}

/** The live entries of a shard this process holds, and the rows they are in. */
export class ShardIndex {
  private readonly byStream = new Map<string, StreamEntries>();
  /** Per stored row, ascending by first seq; a deleted row stays with no live entry until `prune`. */
  private starts: number[] = [];
  private sizes: number[] = [];
  private live: number[] = [];
  private totals: number[] = [];
  private deleted = 0;
  private liveCount = 0;
  private liveBytes = 0;
  private freed = 0;

  /** Live entries across all streams. */
  get liveEntries(): number {
    return this.liveCount;
  }

  /** Bytes of live keys and bodies. */
  get bytes(): number {
    return this.liveBytes;
  }

  /** Streams with a live entry, in the order of their first live entry. */
  keys(): string[] {
    return [...this.byStream.keys()];
  }

  /**
   * Records a stored row: entry i (0-based) has key `streams[i]` and a body of `ends[i] - ends[i - 1]`
   * bytes; `dead` holds the 1-based positions of entries dropped before the row was stored.
   */
  addRow(seq: number, count: number, streams: ArrayLike<string>, ends: ArrayLike<number>, dead: ReadonlySet<number> | undefined): void {
    let live = 0;
    for (let i = 0; i < count; i++) {
      if (dead?.has(i + 1) === true) continue;
      const stream = streams[i]!;
      const bytes = streamBytes(stream) + ends[i]! - (i === 0 ? 0 : ends[i - 1]!);
      const found = this.byStream.get(stream);
      if (found === undefined) this.byStream.set(stream, { seqs: [seq + i], bytes });
      else {
        found.seqs.push(seq + i);
        found.bytes += bytes;
      }
      this.liveBytes += bytes;
      live++;
    }
    if (live === 0) return;
    this.starts.push(seq);
    this.sizes.push(count);
    this.live.push(live);
    this.totals.push(count === 0 ? 0 : ends[count - 1]!);
    this.liveCount += live;
  }

  /** Where a stream's live entries are: parallel arrays of row seq and 1-based position. */
  locate(stream: string): { rows: number[]; positions: number[] } {
    const rows: number[] = [];
    const positions: number[] = [];
    for (const seq of this.byStream.get(stream)?.seqs ?? []) {
      const row = this.starts[this.rowOf(seq)]!;
      rows.push(row);
      positions.push(seq - row + 1);
    }
    return { rows, positions };
  }

  /** What dropping `streams` does to the stored rows; changes nothing until `applyDrop`. */
  planDrop(streams: Iterable<string>): DropPlan {
    const dying = new Map<number, number>();
    const marks: { row: number; position: number }[] = [];
    for (const stream of new Set(streams)) {
      for (const seq of this.byStream.get(stream)?.seqs ?? []) {
        const r = this.rowOf(seq);
        dying.set(r, (dying.get(r) ?? 0) + 1);
        marks.push({ row: r, position: seq - this.starts[r]! + 1 });
      }
    }
    const gone: number[] = [];
    for (const [r, n] of dying) if (n === this.live[r]) gone.push(this.starts[r]!);
    const markRows: number[] = [];
    const markPositions: number[] = [];
    for (const m of marks) {
      if (dying.get(m.row) === this.live[m.row]) continue;
      markRows.push(this.starts[m.row]!);
      markPositions.push(m.position);
    }
    return { gone, markRows, markPositions };
  }

  /** Forgets streams whose drop committed; bytes of rows that went count as freed. */
  applyDrop(streams: Iterable<string>): void {
    for (const stream of streams) {
      const found = this.byStream.get(stream);
      if (found === undefined) continue;
      this.byStream.delete(stream);
      for (const seq of found.seqs) {
        const r = this.rowOf(seq);
        if (--this.live[r]! === 0) {
          this.freed += this.totals[r]!;
          this.deleted++;
        }
      }
      this.liveCount -= found.seqs.length;
      this.liveBytes -= found.bytes;
    }
    if (this.deleted > 64 && this.deleted * 2 > this.starts.length) this.prune();
  }

  /** Rows that hold dropped entries beside live ones, the candidates for compaction. */
  partlyDead(): PartlyDeadRow[] {
    const out: PartlyDeadRow[] = [];
    for (let r = 0; r < this.starts.length; r++) {
      const live = this.live[r]!;
      if (live > 0 && live < this.sizes[r]!) out.push({ seq: this.starts[r]!, entries: this.sizes[r]!, live });
    }
    return out;
  }

  /** Records that compaction rewrote a row to `total` body bytes. */
  rewritten(seq: number, total: number): void {
    const r = this.rowOf(seq);
    // A drop that deleted the row after the rewrite may have been applied first: it counted the row.
    if (this.starts[r] !== seq || this.live[r] === 0) return;
    this.freed += this.totals[r]! - total;
    this.totals[r] = total;
  }

  /** Bytes freed since the last call. */
  takeFreed(): number {
    const n = this.freed;
    this.freed = 0;
    return n;
  }

  /** The index of the row holding entry `seq`: the last row starting at or before it. */
  private rowOf(seq: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= seq) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Removes deleted rows, so the arrays do not grow with every row ever written. */
  private prune(): void {
    const keep = (_: number, r: number): boolean => this.live[r]! > 0;
    this.starts = this.starts.filter(keep);
    this.sizes = this.sizes.filter(keep);
    this.totals = this.totals.filter(keep);
    this.live = this.live.filter((n) => n > 0);
    this.deleted = 0;
  }
}

/** UTF-8 bytes of a key, without encoding it when it is ASCII. */
function streamBytes(stream: string): number {
  for (let i = 0; i < stream.length; i++) if (stream.charCodeAt(i) > 0x7f) return Buffer.byteLength(stream);
  return stream.length;
}
