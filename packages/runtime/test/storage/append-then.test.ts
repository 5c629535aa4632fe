import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { type LocalLog, openLocalLog } from "../../src/storage/index.js";
import type { AppendWaiter } from "../../src/storage/log.js";
import { MemoryFileLayer } from "./support/memory-file-layer.js";

const body = (text: string): Uint8Array => new TextEncoder().encode(text);

async function openOn(disk: MemoryFileLayer, shards = 1): Promise<LocalLog> {
  return openLocalLog({ dir: "/data", shards, fileLayer: disk, preallocate: false, segmentBytes: 4096 });
}

function freshDisk(): MemoryFileLayer {
  const disk = new MemoryFileLayer();
  disk.mkdirDurable("/data");
  return disk;
}

/** A waiter that logs what it is told, with the number of syncs the disk had done by then. */
class Recorder implements AppendWaiter {
  readonly events: string[] = [];
  readonly errors: Error[] = [];
  constructor(private readonly disk: MemoryFileLayer) {}

  for(name: string): AppendWaiter {
    return {
      appended: () => this.events.push(`${name} durable after ${this.disk.syncCount} syncs`),
      failed: (e) => {
        this.events.push(`${name} failed`);
        this.errors.push(e);
      },
    };
  }

  appended(): void {}
  failed(): void {}
}

describe("appendThen", () => {
  it("tells each waiter once its entry is durable, in append order, and never during the call", async () => {
    const disk = freshDisk();
    const log = await openOn(disk);
    const rec = new Recorder(disk);
    const syncsBefore = disk.syncCount;
    log.appendThen(0, "a", body("a-1"), rec.for("a-1"));
    log.appendThen(0, "b", body("b-1"), rec.for("b-1"));
    log.appendThen(0, "a", body("a-2"), rec.for("a-2"));
    expect(rec.events).to.deep.equal([]);
    await log.append(0, { stream: "c", body: body("c-1") });
    const synced = syncsBefore + 1;
    expect(rec.events).to.deep.equal([
      `a-1 durable after ${synced} syncs`,
      `b-1 durable after ${synced} syncs`,
      `a-2 durable after ${synced} syncs`,
    ]);
    expect((await log.read(0, "a")).map((e) => new TextDecoder().decode(e.body))).to.deep.equal(["a-1", "a-2"]);
    await log.close();
  });

  it("tells waiters of a batch whose sync failed, and every later waiter, the shard's StorageError", async () => {
    const disk = freshDisk();
    const log = await openOn(disk);
    const rec = new Recorder(disk);
    disk.failNextSync = true;
    log.appendThen(0, "s", body("1"), rec.for("first"));
    log.appendThen(0, "s", body("2"), rec.for("second"));
    await log.append(0, { stream: "s", body: body("3") }).catch(() => undefined);
    log.appendThen(0, "s", body("4"), rec.for("later"));
    expect(rec.events).to.deep.equal(["first failed", "second failed"]);
    await Promise.resolve();
    expect(rec.events).to.deep.equal(["first failed", "second failed", "later failed"]);
    expect(rec.errors[0]).to.be.instanceOf(StorageError);
    expect(rec.errors[0]!.message).to.contain("shard 0");
    expect(rec.errors[2]).to.equal(rec.errors[0]);
    expect(disk.syncsAfterFailure).to.equal(0);
    await log.close();
  });

  it("refuses an entry it cannot hold through the waiter, not by throwing", async () => {
    const log = await openOn(freshDisk());
    const errors: Error[] = [];
    const waiter = { appended: () => errors.push(new Error("told durable")), failed: (e: Error) => errors.push(e) };
    expect(() => log.appendThen(0, "x".repeat(70_000), body("v"), waiter)).not.to.throw();
    expect(() => log.appendThen(5, "s", body("v"), waiter)).not.to.throw();
    await Promise.resolve();
    expect(errors).to.have.length(2);
    expect(errors[0]).to.be.instanceOf(StorageError);
    expect(errors[0]!.message).to.contain("longer than");
    expect(errors[1]!.message).to.contain("shard 5");
    await log.close();
  });

  it("is waited for by close: nothing told durable is lost", async () => {
    const disk = freshDisk();
    const log = await openOn(disk);
    let told = 0;
    for (let i = 0; i < 100; i++) log.appendThen(0, `s${i % 7}`, body(`v${i}`), { appended: () => told++, failed: () => undefined });
    await log.close();
    expect(told).to.equal(100);
    const reopened = await openOn(disk);
    let count = 0;
    for await (const batch of reopened.scanBatches(0)) count += batch.length;
    expect(count).to.equal(100);
    await reopened.close();
  });
});
