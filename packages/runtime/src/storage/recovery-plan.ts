import path from "node:path";
import { type FileLayer, writeFully } from "./file-layer.js";
import type { Segment } from "./segment.js";

/** A range of a segment to overwrite with zeros: a torn tail, or what a repair cuts off. */
export interface ZeroRange {
  readonly segment: Segment;
  readonly from: number;
  readonly to: number;
}

/**
 * What recovery decided to change in a shard's folder. Deciding writes nothing; the plan is applied
 * only once the whole open is known to succeed, so a refused open leaves the directory as it was.
 */
export interface ShardPlan {
  /** Names in the folder that are not segments: clean-close marks, a prepared segment, compaction leftovers. */
  readonly strays: readonly string[];
  /** Segments after a repair cut, newest first. */
  readonly dropped: readonly string[];
  readonly zero: ZeroRange | undefined;
  /** The newest segment holds frames written without batch headers: it is sealed before anything is appended. */
  readonly seal: boolean;
}

/**
 * Applies a plan. Marks go first, so a mark never vouches for data a cut changed; later segments go
 * before the cut, newest first, so a crash in between leaves a prefix of the log. Every step is
 * synced before the next.
 */
export function applyShardPlan(layer: FileLayer, dir: string, plan: ShardPlan): void {
  for (const name of plan.strays) layer.unlink(path.join(dir, name));
  if (plan.strays.length > 0) layer.syncDir(dir);
  for (const file of plan.dropped) layer.unlink(file);
  if (plan.dropped.length > 0) layer.syncDir(dir);
  if (plan.zero !== undefined && plan.zero.to > plan.zero.from) zeroRange(layer, plan.zero);
}

/** Overwrites the range with zeros and syncs, so a later write never sits before stale bytes. */
function zeroRange(layer: FileLayer, { segment, from, to }: ZeroRange): void {
  const zeros = Buffer.alloc(Math.min(to - from, 1024 * 1024));
  for (let at = from; at < to; at += zeros.length) {
    writeFully(layer, segment.fd, zeros, 0, Math.min(zeros.length, to - at), at);
  }
  layer.sync(segment.fd, true);
}
