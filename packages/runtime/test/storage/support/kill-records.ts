/** Records of the kill sweep: each says which appender wrote it and its sequence number. */

export const KILL_SHARDS = 2;
export const KILL_SEGMENT_BYTES = 128 * 1024;

export function streamOf(appender: number): string {
  return `appender-${appender}`;
}

export function shardOf(appender: number): number {
  return appender % KILL_SHARDS;
}

/** The body of record `seq` of `appender`: a header and a filler whose length and bytes vary. */
export function recordBody(appender: number, seq: number): Uint8Array {
  const filler = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(6).slice(0, (seq * 7 + appender * 13) % 200);
  return new TextEncoder().encode(`${appender}:${seq}:${filler}`);
}

/** The sequence number a record body carries, or undefined when it is not exactly what was written. */
export function parseRecord(appender: number, body: Uint8Array): number | undefined {
  const text = Buffer.from(body).toString();
  const match = /^(\d+):(\d+):/.exec(text);
  if (match === null || Number(match[1]) !== appender) return undefined;
  const seq = Number(match[2]);
  return Buffer.from(recordBody(appender, seq)).equals(Buffer.from(body)) ? seq : undefined;
}
