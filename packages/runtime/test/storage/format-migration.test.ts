import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { nodeFileLayer } from "../../src/storage/file-layer.js";
import { FrameKind } from "../../src/storage/frame.js";
import { type LocalLog, openLocalLog } from "../../src/storage/index.js";
import { FORMAT_VERSION } from "../../src/storage/manifest.js";
import { type Format1Shard, writeFormat1Dir } from "./fixtures/format-1-dir.js";
import { MemoryFileLayer, Random } from "./support/memory-file-layer.js";
import { framesOf, segmentFiles } from "./support/segments.js";
import { useTempDir } from "./support/temp-dir.js";

const body = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array): string => Buffer.from(b).toString();
const entries = (stream: string, from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => ({ stream, body: body(`${stream}-${from + i}`) }));

/** Two shards: one of two segments, closed cleanly; one whose last write was torn by a crash. */
const SHARDS: Format1Shard[] = [
  { segments: [[...entries("a", 0, 20), { stream: "gone", body: body("x") }, { stream: "gone", drop: true }], entries("a", 20, 30)] },
  { segments: [entries("b", 0, 12)], tornTail: Buffer.from([40, 0, 0, 0, 1, 2, 3, 4, 1, 7]) },
];

async function contents(log: LocalLog): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (let shard = 0; shard < log.shardCount; shard++) {
    for await (const e of log.scan(shard)) (out[e.stream] ??= []).push(text(e.body));
  }
  return out;
}

const EXPECTED = {
  a: Array.from({ length: 30 }, (_, i) => `a-${i}`),
  b: Array.from({ length: 12 }, (_, i) => `b-${i}`),
};

function snapshot(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (p: string): void => {
    for (const name of fs.readdirSync(p).sort()) {
      const child = path.join(p, name);
      if (fs.statSync(child).isDirectory()) walk(child);
      else out.set(path.relative(dir, child), fs.readFileSync(child));
    }
  };
  walk(dir);
  return out;
}

function manifestFormat(dir: string): number {
  return (JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8")) as { format: number }).format;
}

describe("a data directory of format 1", function () {
  this.timeout(60_000);
  const tmp = useTempDir("format-1");
  const dir = (): string => path.join(tmp(), "data");

  it("opens read-only by the old rules without changing a byte", async () => {
    const { ends } = writeFormat1Dir(nodeFileLayer, dir(), SHARDS);
    const before = snapshot(dir());
    const log = await openLocalLog({ dir: dir(), readOnly: true });
    expect(await contents(log)).to.deep.equal(EXPECTED);
    expect(log.manifest.format).to.equal(1);
    expect(log.recovery.map((e) => [e.shard, e.kind, e.offset])).to.deep.equal([[1, "torn-tail", ends[1]]]);
    await log.close();
    expect(snapshot(dir())).to.deep.equal(before);
  });

  it("is moved to the current format by its first writable open: the torn tail cut by the old rules, each active segment sealed, new writes in a fresh segment", async () => {
    const { ends } = writeFormat1Dir(nodeFileLayer, dir(), SHARDS);
    const sealedBefore = fs.readFileSync(segmentFiles(dir(), 0)[0]!);

    const log = await openLocalLog({ dir: dir() });
    expect(log.migratedFrom).to.equal(1);
    expect(log.manifest.format).to.equal(FORMAT_VERSION);
    expect(manifestFormat(dir())).to.equal(FORMAT_VERSION);
    expect(log.recovery).to.have.length(1);
    expect(log.recovery[0]).to.include({ shard: 1, kind: "torn-tail", offset: ends[1], discardedBytes: 10 });
    expect(await contents(log)).to.deep.equal(EXPECTED);
    await log.append(0, { stream: "a", body: body("a-30") });
    await log.append(1, { stream: "b", body: body("b-12") });
    await log.close();

    for (const shard of [0, 1]) {
      const files = segmentFiles(dir(), shard);
      const old = framesOf(files.at(-2)!);
      expect(old.at(-1)!.kind, `shard ${shard}: the old active segment is sealed`).to.equal(FrameKind.Seal);
      expect(old.some((f) => f.kind === FrameKind.Batch)).to.equal(false);
      expect(framesOf(files.at(-1)!)[0]!.kind, `shard ${shard}: new writes open with a batch header`).to.equal(FrameKind.Batch);
    }
    expect(fs.readFileSync(segmentFiles(dir(), 0)[0]!).equals(sealedBefore)).to.equal(true);

    const again = await openLocalLog({ dir: dir() });
    expect(again.migratedFrom).to.equal(undefined);
    expect(again.recovery).to.deep.equal([]);
    expect(await contents(again)).to.deep.equal({ a: [...EXPECTED.a, "a-30"], b: [...EXPECTED.b, "b-12"] });
    await again.close();
  });

  it("still refuses damage that a valid frame follows, as format 1 did", async () => {
    writeFormat1Dir(nodeFileLayer, dir(), SHARDS);
    const file = segmentFiles(dir(), 1)[0]!;
    const third = framesOf(file)[2]!;
    const bytes = fs.readFileSync(file);
    bytes[third.end - 1] = bytes[third.end - 1]! ^ 0x02;
    fs.writeFileSync(file, bytes);
    const before = snapshot(dir());
    const err = await openLocalLog({ dir: dir() }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message)
      .to.contain("shard 1")
      .and.contain(file)
      .and.contain(`offset ${third.start}`);
    expect(snapshot(dir())).to.deep.equal(before);
  });

  it("opens again, with every record, after a crash at any point of the migration", async () => {
    let crashes = 0;
    for (let point = 1; ; point++) {
      const disk = new MemoryFileLayer();
      disk.mkdirDurable("/");
      writeFormat1Dir(disk, "/data", SHARDS);
      const start = disk.ops;
      let image: MemoryFileLayer | undefined;
      disk.onOp = (n) => {
        if (n === start + point) image = disk.crashImage(new Random(point));
      };
      const options = { dir: "/data", segmentBytes: 4096, preallocate: point % 2 === 0 };
      await (await openLocalLog({ ...options, fileLayer: disk })).close();
      if (image === undefined) break;
      crashes += 1;
      const where = `crash at operation ${point} of the migration`;
      const reader = await openLocalLog({ dir: "/data", readOnly: true, segmentBytes: 4096, fileLayer: image });
      expect(await contents(reader), where).to.deep.equal(EXPECTED);
      await reader.close();
      const log = await openLocalLog({ ...options, fileLayer: image });
      expect(await contents(log), where).to.deep.equal(EXPECTED);
      expect(log.manifest.format, where).to.equal(FORMAT_VERSION);
      await log.append(0, { stream: "a", body: body("a-30") });
      await log.close();
      const after = await openLocalLog({ ...options, fileLayer: image });
      expect((await contents(after)).a, where).to.deep.equal([...EXPECTED.a, "a-30"]);
      await after.close();
    }
    expect(crashes).to.be.greaterThan(10);
  });
});
