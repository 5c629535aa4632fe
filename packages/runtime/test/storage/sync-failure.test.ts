import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { type LocalLog, openLocalLog } from "../../src/storage/index.js";
import { MemoryFileLayer, Random } from "./support/memory-file-layer.js";

const entry = (stream: string, n: number) => ({ stream, body: new TextEncoder().encode(`${stream}-${n}`) });

async function openOn(disk: MemoryFileLayer, shards: number): Promise<LocalLog> {
  return openLocalLog({ dir: "/data", shards, fileLayer: disk, preallocate: false, segmentBytes: 4096 });
}

function freshDisk(): MemoryFileLayer {
  const disk = new MemoryFileLayer();
  disk.mkdirDurable("/data");
  return disk;
}

describe("a failed write or sync", () => {
  it("makes the shard fatal: its batch and every later append reject, and the sync is not retried", async () => {
    const disk = freshDisk();
    const log = await openOn(disk, 1);
    await log.append(0, entry("s", 0));
    disk.failNextSync = true;
    const batch = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => log.append(0, entry("s", i + 1))));
    expect(batch.map((r) => r.status)).to.deep.equal(Array(10).fill("rejected"));
    const err = (batch[0] as PromiseRejectedResult).reason as Error;
    expect(err).to.be.instanceOf(StorageError);
    expect(err.message).to.contain("shard 0").and.contain("EIO");

    const later = await log.append(0, entry("s", 99)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(later).to.equal(err);
    expect(await log.drop(0, ["s"]).catch((e: unknown) => e)).to.equal(err);
    expect(disk.syncsAfterFailure).to.equal(0);
    expect(log.stats().appended[0]).to.equal(1);
    await log.close();
  });

  it("leaves the other shards working", async () => {
    const disk = freshDisk();
    const log = await openOn(disk, 2);
    disk.failNextSync = true;
    // Both shards flush in the same turn, so they sync in parallel and exactly one sync fails.
    const [a, b] = await Promise.allSettled([log.append(0, entry("a", 0)), log.append(1, entry("b", 0))]);
    const failed = a!.status === "rejected" ? 0 : 1;
    expect([a!.status, b!.status].sort()).to.deep.equal(["fulfilled", "rejected"]);
    const healthy = 1 - failed;
    await log.append(healthy, entry("c", 1));
    expect((await log.read(healthy, "c")).length).to.equal(1);
    const err = await log.append(failed, entry("c", 2)).catch((e: unknown) => e);
    expect((err as Error).message).to.contain(`shard ${failed}`);
    await log.close();
    // Only the shard that closed cleanly vouches for where its data ends.
    const marks = (shard: number) => (disk.readdir(`/data/shard-000${shard}`) ?? []).filter((n) => n.startsWith("clean-"));
    expect(marks(healthy)).to.have.length(1);
    expect(marks(failed)).to.deep.equal([]);
  });

  it("makes the shard fatal when a write fails", async () => {
    const disk = freshDisk();
    const log = await openOn(disk, 1);
    disk.failNextWrite = true;
    const err = await log.append(0, entry("s", 0)).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message)
      .to.contain("ENOSPC")
      .and.contain("writing to");
    expect(await log.append(0, entry("s", 1)).catch((e: unknown) => e)).to.equal(err);
    await log.close();
  });

  it("continues short writes until the whole batch is on disk", async () => {
    const disk = freshDisk();
    disk.shortWrites = new Random(7);
    let log = await openOn(disk, 1);
    await Promise.all(Array.from({ length: 300 }, (_, i) => log.append(0, entry(`s${i % 4}`, i))));
    await log.close();
    disk.shortWrites = undefined;
    log = await openOn(disk, 1);
    expect(log.recovery).to.deep.equal([]);
    expect(log.stats().liveEntries[0]).to.equal(300);
    await log.close();
  });
});
