import { expect } from "chai";
import { openLocalLog } from "../../src/storage/index.js";
import { MemoryFileLayer } from "./support/memory-file-layer.js";

/*
 * One appender awaiting each append has its entry written and synced inside the call; these tests
 * hold what that must not change for everyone else.
 */
const body = (text: string): Uint8Array => new TextEncoder().encode(text);

function freshDisk(): MemoryFileLayer {
  const disk = new MemoryFileLayer();
  disk.mkdirDurable("/data");
  return disk;
}

describe("a local log with one appender awaiting each append", () => {
  it("still lets timers run between its appends", async () => {
    const log = await openLocalLog({ dir: "/data", shards: 1, fileLayer: freshDisk() });
    for (let i = 0; i < 20; i++) await log.append(0, { stream: "a", body: body(`a-${i}`) });
    let fired = -1;
    let i = 0;
    setTimeout(() => (fired = i), 0);
    for (; i < 400 && fired < 0; i++) await log.append(0, { stream: "a", body: body(`a-${i}`) });
    expect(fired).to.be.within(0, 20);
    await log.close();
  });

  it("gathers the appends of a second appender into shared syncs once it joins", async () => {
    const disk = freshDisk();
    const log = await openLocalLog({ dir: "/data", shards: 1, fileLayer: disk });
    for (let i = 0; i < 20; i++) await log.append(0, { stream: "a", body: body(`a-${i}`) });
    const before = disk.syncCount;
    await Promise.all(
      ["b", "c"].map(async (s) => {
        for (let i = 0; i < 100; i++) await log.append(0, { stream: s, body: body(`${s}-${i}`) });
      }),
    );
    expect(disk.syncCount - before).to.be.at.most(110);
    expect((await log.read(0, "b")).map((e) => new TextDecoder().decode(e.body))).to.deep.equal(
      Array.from({ length: 100 }, (_, i) => `b-${i}`),
    );
    await log.close();
  });

  it("tells a waiter of appendThen after its call, also when the shard is idle", async () => {
    const log = await openLocalLog({ dir: "/data", shards: 1, fileLayer: freshDisk() });
    for (let i = 0; i < 20; i++) await log.append(0, { stream: "a", body: body(`a-${i}`) });
    let told = false;
    let calling = true;
    let duringCall = false;
    log.appendThen(0, "w", body("w-0"), {
      appended: () => {
        told = true;
        duringCall = calling;
      },
      failed: () => undefined,
    });
    calling = false;
    await log.append(0, { stream: "a", body: body("a-20") });
    expect({ told, duringCall }).to.deep.equal({ told: true, duringCall: false });
    await log.close();
  });
});
