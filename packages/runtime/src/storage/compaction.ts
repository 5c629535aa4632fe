import path from "node:path";
import { StorageError } from "../core/errors.js";
import { writeFully } from "./file-layer.js";
import { FrameKind, FrameView, SEAL_FRAME_BYTES, encodeSeal } from "./frame.js";
import { FrameReader } from "./frame-reader.js";
import { COMPACT_SUFFIX, FILE_MODE, Segment } from "./segment.js";
import type { Shard } from "./shard.js";
import { position } from "./stream-index.js";

interface Kept {
  readonly key: string;
  readonly from: number;
  readonly to: number;
}

/**
 * Rewrites every sealed segment of a shard that holds dropped entries or tombstones, keeping only
 * live entries (copied byte for byte, checksums included) and no batch headers. Returns the bytes
 * freed.
 *
 * Segments are rewritten oldest first, each through a synced temporary file renamed over the
 * original, so a crash leaves every segment old or new, never half. Tombstones in sealed segments
 * can go because by the time segment k is rewritten, every older segment has been rewritten in
 * this same pass without the entries those tombstones drop; tombstones in the active segment stay.
 * A live entry dropped while its segment is being copied stays in the copy, still covered by its
 * tombstone, which is newer and so in the active segment. So the pass takes only the segments sealed
 * when it begins: the active segment may be sealed while the pass waits on a sync, and its
 * tombstones, written after older segments were copied, must outlive the entries they drop there.
 */
export async function compactShard(shard: Shard): Promise<number> {
  const { layer } = shard;
  const view = new FrameView();
  let freed = 0;
  for (const seg of shard.list().filter((s) => s.sealed)) {
    const out = Buffer.allocUnsafe(seg.end);
    let outLen = 0;
    let changed = false;
    const kept: Kept[] = [];
    const reader = new FrameReader(layer, shard.shard, seg, 0, seg.end);
    while (reader.next(view)) {
      // A sealed segment was synced whole, so its batch headers have done their work and are not kept.
      if (view.kind === FrameKind.Seal || view.kind === FrameKind.Batch) continue;
      const from = reader.base + view.start;
      const key = view.key(reader.buf);
      if (view.kind !== FrameKind.Entry || !shard.index.isLive(key, position(seg.seq, from))) {
        changed = true;
        continue;
      }
      kept.push({ key, from: position(seg.seq, from), to: position(seg.seq, outLen) });
      outLen += reader.buf.copy(out, outLen, view.start, view.end);
    }
    if (!changed) continue;

    if (kept.length === 0) {
      await unread(seg);
      layer.unlink(seg.path);
      layer.syncDir(shard.dir);
      shard.removeSegment(seg);
      freed += seg.end;
      continue;
    }
    encodeSeal(out, outLen, kept.length);
    outLen += SEAL_FRAME_BYTES;
    const temp = path.join(shard.dir, `${seg.name}${COMPACT_SUFFIX}`);
    if (layer.exists(temp)) layer.unlink(temp);
    const fd = layer.open(temp, "create", FILE_MODE);
    try {
      writeFully(layer, fd, out, 0, outLen, 0);
      await new Promise<void>((resolve, reject) => layer.syncAsync(fd, true, (err) => (err ? reject(err) : resolve())));
      await unread(seg);
      layer.rename(temp, seg.path);
      layer.syncDir(shard.dir);
    } catch (err) {
      layer.close(fd);
      throw new StorageError(`shard ${shard.shard}: compacting ${seg.path} failed: ${(err as Error).message}`, {
        cause: err,
      });
    }
    // From the rename on, the index must point into the new file: move it in this same turn.
    const relocate = shard.index.relocator();
    for (const k of kept) relocate(k.key, k.from, k.to);
    shard.replaceSegment(seg, new Segment(seg.seq, seg.path, fd, outLen, kept.length, true, outLen));
    freed += seg.end - outLen;
  }
  return freed;
}

async function unread(seg: Segment): Promise<void> {
  while (!seg.unread) await seg.whenUnread();
}
