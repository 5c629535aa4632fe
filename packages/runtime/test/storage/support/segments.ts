import fs from "node:fs";
import path from "node:path";
import { FrameKind, FrameView, readFrame } from "../../../src/storage/frame.js";

/** A frame found in a segment file, for tests that damage files at known places. */
export interface FrameAt {
  readonly file: string;
  readonly start: number;
  readonly end: number;
  readonly kind: FrameKind;
  readonly key: string;
  readonly payload: string;
}

/** Segment files of a shard, oldest first. */
export function segmentFiles(dir: string, shard = 0): string[] {
  const shardDir = path.join(dir, `shard-${shard.toString().padStart(4, "0")}`);
  return fs
    .readdirSync(shardDir)
    .filter((n) => n.endsWith(".log"))
    .sort()
    .map((n) => path.join(shardDir, n));
}

/** Every valid frame of a segment file, in order, up to the first invalid one. */
export function framesOf(file: string): FrameAt[] {
  const buf = fs.readFileSync(file);
  const view = new FrameView();
  const out: FrameAt[] = [];
  for (let off = 0; readFrame(buf, off, buf.length, view); off = view.end) {
    out.push({
      file,
      start: off,
      end: view.end,
      kind: view.kind,
      key: view.key(buf),
      payload: buf.toString("utf8", view.payloadStart, view.end),
    });
    if (view.kind === FrameKind.Seal) break;
  }
  return out;
}
