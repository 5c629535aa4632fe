import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { FrameKind } from "../../src/storage/frame.js";
import type { OpenMode } from "../../src/storage/file-layer.js";
import { openLocalLog } from "../../src/storage/index.js";
import { type Child, killHard, startChild } from "./support/child.js";
import { KILL_SEGMENT_BYTES } from "./support/kill-records.js";
import { MemoryFileLayer } from "./support/memory-file-layer.js";
import { framesOf, segmentFiles } from "./support/segments.js";
import { useTempDir } from "./support/temp-dir.js";

const WRITER = new URL("./fixtures/kill-writer.js", import.meta.url);
const HOLDER = new URL("./fixtures/lock-holder.js", import.meta.url);

function dropMarks(file: string): void {
  const folder = path.dirname(file);
  for (const name of fs.readdirSync(folder)) if (name.startsWith("clean-")) fs.rmSync(path.join(folder, name));
}

function writeAt(file: string, at: number, bytes: Buffer): void {
  const fd = fs.openSync(file, "r+");
  fs.writeSync(fd, bytes, 0, bytes.length, at);
  fs.closeSync(fd);
}

/** A disk whose first read of a file is served from an older picture of it, as a reader racing a writer sees it. */
class StaleFirstRead extends MemoryFileLayer {
  readonly stale = new Map<string, Buffer>();
  private readonly paths = new Map<number, string>();

  override open(file: string, mode: OpenMode, perm: number, dsync = false): number {
    const fd = super.open(file, mode, perm, dsync);
    this.paths.set(fd, file);
    return fd;
  }

  override read(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number {
    const file = this.paths.get(fd)!;
    const picture = this.stale.get(file);
    if (picture === undefined) return super.read(fd, buffer, offset, length, position);
    this.stale.delete(file);
    const n = Math.max(0, Math.min(length, picture.length - position));
    buffer.set(picture.subarray(position, position + n), offset);
    return n;
  }
}

describe("a read-only open", function () {
  this.timeout(60_000);
  let child: Child | undefined;
  // Defined before the temporary folder's hooks, so the writer is gone before its folder is removed.
  afterEach(async () => {
    if (child !== undefined) await killHard(child);
    child = undefined;
  });
  const tmp = useTempDir("read-only");
  const dir = (): string => path.join(tmp(), "data");

  it("with no writer, leaves a torn last write out, reports it and changes nothing", async () => {
    const log = await openLocalLog({ dir: dir(), shards: 1, preallocate: false });
    for (let i = 0; i < 10; i++) await log.append(0, { stream: "s", body: Buffer.from(`r${i}`) });
    await log.close();
    const file = segmentFiles(dir())[0]!;
    dropMarks(file);
    const end = fs.statSync(file).size;
    writeAt(file, end, Buffer.from([23, 0, 0, 0, 5, 6, 7, 8, 4]));
    const before = fs.readFileSync(file);

    const reader = await openLocalLog({ dir: dir(), readOnly: true });
    expect(reader.recovery).to.have.length(1);
    expect(reader.recovery[0]).to.include({ kind: "torn-tail", segment: file, offset: end, discardedBytes: 9 });
    expect((await reader.read(0, "s")).length).to.equal(10);
    await reader.close();
    expect(fs.readFileSync(file).equals(before)).to.equal(true);
  });

  it("refuses damage that a later batch follows, also while a writer holds the directory", async () => {
    child = startChild(HOLDER, [dir()]);
    await child.ready;
    const file = segmentFiles(dir())[0]!;
    const [first] = framesOf(file).filter((f) => f.kind === FrameKind.Entry);
    const bytes = fs.readFileSync(file);
    bytes[first!.end - 1] = bytes[first!.end - 1]! ^ 0x01;
    fs.writeFileSync(file, bytes);

    const err = await openLocalLog({ dir: dir(), readOnly: true }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message)
      .to.contain("shard 0")
      .and.contain(file)
      .and.contain(`offset ${first!.start}`);
  });

  it("reads a batch again when it was half written at first sight and the next batch has appeared since", async () => {
    const disk = new StaleFirstRead();
    disk.mkdirDurable("/data");
    const log = await openLocalLog({ dir: "/data", shards: 1, preallocate: false, fileLayer: disk });
    const file = "/data/shard-0000/000000000001.log";
    for (let i = 0; i < 5; i++) await log.append(0, { stream: "s", body: Buffer.from(`record-${i}`) });
    const before = disk.contents(file).length;
    for (let i = 5; i < 7; i++) await log.append(0, { stream: "s", body: Buffer.from(`record-${i}`) });
    await log.close();
    for (const name of disk.readdir("/data/shard-0000")!) if (name.startsWith("clean-")) disk.unlink(`/data/shard-0000/${name}`);
    // The first read sees the sixth batch half written and the seventh not yet begun.
    const now = disk.contents(file);
    const picture = Buffer.alloc(now.length);
    now.copy(picture, 0, 0, before + 30);
    disk.stale.set(file, picture);

    const reader = await openLocalLog({ dir: "/data", readOnly: true, fileLayer: disk });
    expect(reader.recovery).to.deep.equal([]);
    expect((await reader.read(0, "s")).map((e) => Buffer.from(e.body).toString())).to.deep.equal(
      Array.from({ length: 7 }, (_, i) => `record-${i}`),
    );
    await reader.close();
  });

  it("never takes a batch its writer is still writing for damage, over many opens beside a busy writer process", async () => {
    child = startChild(WRITER, [dir(), path.join(tmp(), "acks.txt"), "16"]);
    await child.ready;
    const kinds = new Set<string>();
    const until = Date.now() + 3_000;
    let opens = 0;
    while (Date.now() < until) {
      const reader = await openLocalLog({ dir: dir(), readOnly: true, segmentBytes: KILL_SEGMENT_BYTES });
      for (const e of reader.recovery) kinds.add(e.kind);
      await reader.close();
      opens += 1;
    }
    expect(opens).to.be.greaterThan(20);
    expect(["incomplete-tail"]).to.include.members([...kinds]);
  });
});
