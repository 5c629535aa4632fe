/** Entries and bytes of one stream. */
interface StreamFigures {
  entries: number;
  bytes: number;
}

/**
 * What an owned shard holds, per stream, kept in memory so `streams` and `stats` answer without a
 * query. Loaded from the table when the shard's lease is acquired, then kept in step with every
 * committed batch; streams keep the order of their first live entry.
 */
export class StreamCounts {
  private readonly byStream = new Map<string, StreamFigures>();
  private live = 0;
  private size = 0;
  private freed = 0;

  /** Live entries across all streams. */
  get liveEntries(): number {
    return this.live;
  }

  /** Bytes of live keys and bodies. */
  get bytes(): number {
    return this.size;
  }

  keys(): string[] {
    return [...this.byStream.keys()];
  }

  /** Records `entries` committed entries of a stream holding `bytes` bytes in all. */
  add(stream: string, entries: number, bytes: number): void {
    const f = this.byStream.get(stream);
    if (f === undefined) this.byStream.set(stream, { entries, bytes });
    else {
      f.entries += entries;
      f.bytes += bytes;
    }
    this.live += entries;
    this.size += bytes;
  }

  /** Forgets a stream whose drop committed. */
  drop(stream: string): void {
    const f = this.byStream.get(stream);
    if (f === undefined) return;
    this.byStream.delete(stream);
    this.live -= f.entries;
    this.size -= f.bytes;
    this.freed += f.bytes;
  }

  /** Bytes dropped since the last call. */
  takeFreed(): number {
    const n = this.freed;
    this.freed = 0;
    return n;
  }
}
