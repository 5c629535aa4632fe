/**
 * Told what a local log's recovery keeps while it reads a shard, so that a caller building an index
 * of its own over the log's entries does so in the same read instead of scanning the shard again.
 *
 * Calls come in log order, shard after shard, and describe exactly what recovery keeps: the entries
 * of a batch only once the whole batch was read (a torn batch is never told), nothing past a cut.
 * An entry that a later tombstone drops is told before the tombstone, so `dropped` undoes what
 * `entry` told of its stream.
 */
export interface RecoveryVisitor {
  /**
   * An entry recovery keeps. `body` is a view into recovery's read buffer, valid during the call
   * only (the buffer is read over afterwards): copy what is to be kept.
   */
  entry(shard: number, stream: string, body: Uint8Array): void;
  /** A tombstone: every entry of `stream` told before is dropped. */
  dropped(shard: number, stream: string): void;
}
