/*
 * The mark a shard's writer leaves when it closes cleanly: where its newest segment ended. Recovery
 * otherwise reads the whole zero-filled rest of that segment (up to its full size, 64 MiB by
 * default) to be sure no synced frame lies past a hole. After a clean close nothing was written
 * past the mark, so that read proves nothing and is skipped.
 *
 * The mark is an empty file whose name holds the segment and the offset, so it is whole or absent:
 * it exists once its directory is synced. A writer that opens the shard removes it, durably, before
 * it can append, so a mark never outlives the close it describes; after a crash there is none and
 * recovery reads the tail as before. It also vouches for the data: a newest segment that ends
 * before the mark, or a mark naming another segment, is damage and never a torn write.
 */
import path from "node:path";
import type { FileLayer } from "./file-layer.js";
import { FILE_MODE } from "./segment.js";

/** Where the newest segment ended at a clean close. */
export interface CleanMark {
  readonly segment: number;
  readonly end: number;
}

const PATTERN = /^clean-(\d{12})-(\d{1,15})$/;

/** Marks `dir` closed cleanly with its newest segment ending at `mark.end`. */
export function writeCleanMark(layer: FileLayer, dir: string, mark: CleanMark): void {
  const name = `clean-${String(mark.segment).padStart(12, "0")}-${mark.end}`;
  layer.close(layer.open(path.join(dir, name), "create", FILE_MODE));
  layer.syncDir(dir);
}

/** The mark among a shard directory's `names`, if it holds exactly one. */
export function findCleanMark(names: readonly string[]): CleanMark | undefined {
  let found: CleanMark | undefined;
  for (const name of names) {
    const m = PATTERN.exec(name);
    if (m === null) continue;
    if (found !== undefined) return undefined;
    found = { segment: Number(m[1]), end: Number(m[2]) };
  }
  return found;
}

/** Whether a name in a shard directory is a clean-close mark. */
export function isCleanMark(name: string): boolean {
  return PATTERN.test(name);
}
