import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { openLocalLog } from "../../src/storage/index.js";
import { MemoryFileLayer } from "./support/memory-file-layer.js";

const DIR = "/data";

function freshDisk(): MemoryFileLayer {
  const disk = new MemoryFileLayer();
  disk.mkdirDurable(DIR);
  return disk;
}

async function openError(disk: MemoryFileLayer): Promise<unknown> {
  return openLocalLog({ dir: DIR, shards: 1, fileLayer: disk, preallocate: false }).then(
    async (log) => {
      await log.close();
      return undefined;
    },
    (e: unknown) => e,
  );
}

describe("the manifest of a new data directory", () => {
  it("refuses with a StorageError naming the manifest and the sync when its first sync fails", async () => {
    const disk = freshDisk();
    disk.failNextSync = true;
    const err = await openError(disk);
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message)
      .to.contain(`${DIR}/manifest.json.tmp`)
      .and.contain("syncing")
      .and.contain("EIO");
  });

  it("refuses with a StorageError naming the manifest and the rename when its rename fails", async () => {
    const disk = freshDisk();
    disk.failNextRename = true;
    const err = await openError(disk);
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message)
      .to.contain(`${DIR}/manifest.json`)
      .and.contain("renaming")
      .and.contain("EIO");
  });

  it("is written whole once the failure has passed", async () => {
    const disk = freshDisk();
    disk.failNextRename = true;
    await openError(disk);
    const log = await openLocalLog({ dir: DIR, shards: 1, fileLayer: disk, preallocate: false });
    expect(log.manifest.shards).to.equal(1);
    await log.close();
  });
});
