import { crc32c as nativeCrc32c } from "@node-rs/crc32";
import { crc32c } from "../src/storage/crc32c.js";
import { round } from "./percentile.js";

/** The log hands `crc32c` bodies of up to this many bytes for its table loop, and longer ones to the native code. */
const TABLE_SLICE = 255;

/** The table loop alone over a whole buffer, in slices it keeps to itself. */
function tableLoop(bytes: Uint8Array): number {
  let c = 0;
  for (let i = 0; i < bytes.length; i += TABLE_SLICE) c ^= crc32c(bytes, i, Math.min(bytes.length, i + TABLE_SLICE));
  return c;
}

function gigabytesPerSecond(f: (bytes: Uint8Array) => number, bytes: Uint8Array): number {
  for (let i = 0; i < 50; i++) f(bytes);
  const reps = Math.max(20, Math.floor((64 << 20) / bytes.length));
  const began = performance.now();
  for (let i = 0; i < reps; i++) f(bytes);
  return round((reps * bytes.length) / ((performance.now() - began) / 1000) / 1e9, 2);
}

/**
 * `npm run bench -- crc [--json]`: the checksum of the log's records, native (`@node-rs/crc32`,
 * SIMD) against the pure JavaScript table loop the log uses for short bodies, over the sizes of a
 * batch of records: whether a pure-JS checksum could replace the native dependency.
 */
export async function runCrcBench(args: readonly string[]): Promise<void> {
  const rows = [4096, 65_536, 1 << 20].map((size) => {
    const bytes = new Uint8Array(size).map((_, i) => (i * 31) & 0xff);
    return { bytes: size, native_gb_s: gigabytesPerSecond((b) => nativeCrc32c(b), bytes), js_gb_s: gigabytesPerSecond(tableLoop, bytes) };
  });
  if (args.includes("--json")) process.stdout.write(`${JSON.stringify(rows)}\n`);
  else for (const r of rows) process.stdout.write(`${r.bytes} bytes: native ${r.native_gb_s} GB/s, JavaScript ${r.js_gb_s} GB/s\n`);
}
