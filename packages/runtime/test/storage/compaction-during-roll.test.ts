import { expect } from "chai";
import fs from "node:fs";
import path from "node:path";
import { type FileLayer, nodeFileLayer } from "../../src/storage/file-layer.js";
import { openLocalLog } from "../../src/storage/local-log.js";
import { COMPACT_SUFFIX } from "../../src/storage/segment.js";
import { useTempDir } from "./support/temp-dir.js";

/** The node file system, but the sync of a compaction's copy waits until `release` is called. */
function holdingCompaction(): { layer: FileLayer; held: Promise<void>; release(): void } {
  const copies = new Set<number>();
  let waiting: (() => void) | undefined;
  let heldNow = (): void => undefined;
  const held = new Promise<void>((resolve) => (heldNow = resolve));
  const layer: FileLayer = {
    ...nodeFileLayer,
    open: (file, mode, perm, dsync) => {
      const fd = nodeFileLayer.open(file, mode, perm, dsync);
      if (file.endsWith(COMPACT_SUFFIX)) copies.add(fd);
      return fd;
    },
    syncAsync: (fd, dataOnly, done) => {
      if (!copies.has(fd) || waiting !== undefined) return nodeFileLayer.syncAsync(fd, dataOnly, done);
      waiting = () => nodeFileLayer.syncAsync(fd, dataOnly, done);
      heldNow();
    },
  };
  return { layer, held, release: () => waiting?.() };
}

const entry = (stream: string, bytes = 200) => ({ stream, body: new Uint8Array(bytes).fill(7) });

function segmentCount(dir: string): number {
  return fs.readdirSync(path.join(dir, "shard-0000")).filter((n) => /^\d{12}\.log$/.test(n)).length;
}

describe("compaction while the active segment is sealed", () => {
  const tmp = useTempDir("compact-roll");

  it("keeps the tombstone of a stream dropped during the pass when its segment is sealed before the pass reaches it", async () => {
    const dir = path.join(tmp(), "data");
    const hold = holdingCompaction();
    const log = await openLocalLog({ dir, shards: 1, segmentBytes: 4096, preallocate: false, fileLayer: hold.layer });
    // The first segment holds a dropped stream (so the pass rewrites it) and a live one, `x`.
    await log.appendAll(0, [entry("gone"), entry("x"), entry("x")]);
    await log.drop(0, ["gone"]);
    while (segmentCount(dir) < 2) await log.append(0, entry("filler"));
    const compacting = log.compact(0);
    await hold.held;
    // While the first segment's copy (with `x` still live in it) is being synced, `x` is dropped
    // and the segment holding its tombstone is sealed.
    await log.drop(0, ["x"]);
    while (segmentCount(dir) < 3) await log.append(0, entry("filler"));
    hold.release();
    await compacting;
    expect(await log.read(0, "x")).to.deep.equal([]);
    await log.close();

    const reopened = await openLocalLog({ dir, shards: 1, segmentBytes: 4096, preallocate: false });
    try {
      expect(reopened.streams(0)).to.not.include("x");
      expect(await reopened.read(0, "x")).to.deep.equal([]);
    } finally {
      await reopened.close();
    }
  });
});
