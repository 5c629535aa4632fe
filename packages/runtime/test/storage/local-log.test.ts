import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { ConfigError, StorageError } from "../../src/core/errors.js";
import { FrameKind } from "../../src/storage/frame.js";
import { FORMAT_VERSION } from "../../src/storage/manifest.js";
import { LocalLog, type LocalLogOptions, openLocalLog } from "../../src/storage/index.js";
import { framesOf, segmentFiles } from "./support/segments.js";
import { useTempDir } from "./support/temp-dir.js";
import { openError } from "./support/open-error.js";

const body = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array): string => Buffer.from(b).toString();

async function fill(options: LocalLogOptions, count: number, stream = (i: number) => `s${i % 3}`): Promise<void> {
  const log = await openLocalLog({ shards: 1, ...options });
  for (let i = 0; i < count; i++) await log.append(0, { stream: stream(i), body: body(`record-${i}`) });
  await log.close();
}

async function allEntries(log: LocalLog, shard = 0): Promise<string[]> {
  const out: string[] = [];
  for await (const e of log.scan(shard)) out.push(text(e.body));
  return out;
}

const MIB = 1024 * 1024;

/** The clean-close marks in a shard's folder. */
function cleanMarks(shardDir: string): string[] {
  return fs
    .readdirSync(shardDir)
    .filter((n) => n.startsWith("clean-"))
    .map((n) => path.join(shardDir, n));
}

function flip(file: string, at: number, mask: number): void {
  const bytes = fs.readFileSync(file);
  bytes[at] = bytes[at]! ^ mask;
  fs.writeFileSync(file, bytes);
}

/** Gives a segment an open created (prepared only in part) the zero-filled length of a segment prepared whole. */
function wholeSegment(file: string): void {
  fs.truncateSync(file, 64 * MIB);
}

const records = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `record-${from + i}`);

describe(LocalLog.name, () => {
  const tmp = useTempDir("local-log");
  const dir = (): string => path.join(tmp(), "data");

  describe("recovery", () => {
    it("truncates a torn tail of the newest segment", async () => {
      await fill({ dir: dir(), preallocate: false }, 20);
      const [file] = segmentFiles(dir());
      const [header, last] = framesOf(file!).slice(-2);
      expect(header!.kind).to.equal(FrameKind.Batch);
      fs.truncateSync(file!, last!.start + 5);
      // A process that crashed leaves no clean-close mark.
      for (const mark of cleanMarks(path.dirname(file!))) fs.rmSync(mark);

      let log = await openLocalLog({ dir: dir() });
      expect(log.recovery).to.have.length(1);
      expect(log.recovery[0]).to.include({ kind: "torn-tail", shard: 0, segment: file, offset: header!.start });
      expect(await allEntries(log)).to.deep.equal(records(0, 19));
      await log.append(0, { stream: "s0", body: body("after") });
      await log.close();

      log = await openLocalLog({ dir: dir() });
      expect(log.recovery).to.deep.equal([]);
      expect(await allEntries(log)).to.deep.equal([...records(0, 19), "after"]);
      await log.close();
    });

    it("zeroes a torn write in a preallocated segment so later appends never sit before stale bytes", async () => {
      await fill({ dir: dir(), segmentBytes: 64 * 1024 }, 20);
      const [file] = segmentFiles(dir());
      const end = framesOf(file!).at(-1)!.end;
      const fd = fs.openSync(file!, "r+");
      fs.writeSync(fd, Buffer.from("a half-written frame and its garbage"), 0, 36, end);
      fs.closeSync(fd);

      let log = await openLocalLog({ dir: dir(), segmentBytes: 64 * 1024 });
      expect(log.recovery.map((e) => [e.kind, e.offset, e.discardedBytes])).to.deep.equal([["torn-tail", end, 36]]);
      await log.append(0, { stream: "s0", body: body("x") });
      await log.close();

      log = await openLocalLog({ dir: dir(), segmentBytes: 64 * 1024 });
      expect(log.recovery).to.deep.equal([]);
      expect(await allEntries(log)).to.deep.equal([...records(0, 20), "x"]);
      await log.close();
    });

    it("recognizes the zero-filled tail of a preallocated segment as the end, not as damage", async () => {
      await fill({ dir: dir(), segmentBytes: 64 * 1024 }, 10);
      const [file] = segmentFiles(dir());
      expect(fs.statSync(file!).size).to.equal(64 * 1024);
      const log = await openLocalLog({ dir: dir(), segmentBytes: 64 * 1024 });
      expect(log.recovery).to.deep.equal([]);
      expect(await allEntries(log)).to.deep.equal(records(0, 10));
      await log.close();
    });

    it("reports a bad frame followed by valid frames as corruption, naming shard, segment, offset and the fix", async () => {
      await fill({ dir: dir(), preallocate: false }, 20);
      const [file] = segmentFiles(dir());
      const fifth = framesOf(file!).filter((f) => f.kind === FrameKind.Entry)[5]!;
      flip(file!, fifth.end - 2, 0x10);

      const err = await openError({ dir: dir() });
      expect(err).to.be.instanceOf(StorageError);
      expect(err.message).to.contain("shard 0").and.contain(file!).and.contain(`offset ${fifth.start}`);
      expect(err.message).to.contain(`fusee repair --data ${dir()}`).and.contain(`Config.local("${dir()}").repair()`);
    });

    it("reports damage at the end of an older segment as corruption", async () => {
      await fill({ dir: dir(), segmentBytes: 4096 }, 600);
      const files = segmentFiles(dir());
      expect(files.length).to.be.at.least(3);
      const frames = framesOf(files[0]!);
      const lastEntry = frames.at(-2)!;
      flip(files[0]!, lastEntry.end - 1, 0x01);

      const err = await openError({ dir: dir(), segmentBytes: 4096 });
      expect(err).to.be.instanceOf(StorageError);
      expect(err.message).to.contain(files[0]!).and.contain(`offset ${lastEntry.start}`);
    });

    it("reports an older segment cut short at a frame boundary as corruption", async () => {
      await fill({ dir: dir(), segmentBytes: 4096 }, 600);
      const files = segmentFiles(dir());
      const seal = framesOf(files[0]!).at(-1)!;
      expect(seal.kind).to.equal(FrameKind.Seal);
      fs.truncateSync(files[0]!, seal.start);

      const err = await openError({ dir: dir(), segmentBytes: 4096 });
      expect(err).to.be.instanceOf(StorageError);
      expect(err.message).to.contain(files[0]!).and.contain("without its seal");
    });

    it("cuts the shard at the corruption with repair: true and reports what it discarded", async () => {
      await fill({ dir: dir(), segmentBytes: 4096 }, 600);
      const files = segmentFiles(dir());
      const frames = framesOf(files[0]!);
      const bad = frames.filter((f) => f.kind === FrameKind.Entry)[3]!;
      const batch = frames[frames.findIndex((f) => f === bad) - 1]!;
      expect(batch.kind).to.equal(FrameKind.Batch);
      flip(files[0]!, bad.start + 9, 0xff);

      let log = await openLocalLog({ dir: dir(), segmentBytes: 4096, repair: true });
      expect(log.recovery).to.have.length(1);
      expect(log.recovery[0]).to.include({ kind: "repaired", segment: files[0], offset: batch.start });
      expect(log.recovery[0]!.discardedBytes).to.be.greaterThan(4096);
      expect(await allEntries(log)).to.deep.equal(records(0, 3));
      expect(segmentFiles(dir())).to.have.length(1);
      await log.append(0, { stream: "s0", body: body("after repair") });
      await log.close();

      log = await openLocalLog({ dir: dir(), segmentBytes: 4096 });
      expect(log.recovery).to.deep.equal([]);
      expect(await allEntries(log)).to.deep.equal([...records(0, 3), "after repair"]);
      await log.close();
    });
  });

  describe("recovery across read windows", () => {
    // Recovery reads segments 4 MiB at a time and the batched scan 1 MiB at a time.

    it("reopens a segment whose frames straddle the read windows, a frame larger than a window among them", async () => {
      const options = { dir: dir(), shards: 1, segmentBytes: 64 * MIB };
      let log = await openLocalLog(options);
      const big = Buffer.alloc(5 * MIB, 7);
      const written: string[] = [];
      for (let i = 0; i < 3_000; i++) {
        const b = i === 1_500 ? big : Buffer.from(`${i}:`.padEnd(2_000 + (i % 97), "x"));
        await log.append(0, { stream: `s${i % 5}`, body: b });
        written.push(i === 1_500 ? "big" : `${i}`);
      }
      await log.close();

      log = await openLocalLog(options);
      expect(log.recovery).to.deep.equal([]);
      const kept: Uint8Array[] = [];
      for await (const batch of log.scanBatches(0)) kept.push(...batch.map((e) => e.body));
      // Bodies of earlier batches stay intact after later windows were read.
      expect(kept.map((b) => (b.length === big.length ? "big" : text(b).split(":")[0]))).to.deep.equal(written);
      expect(Buffer.compare(Buffer.from(kept[1_500]!), big)).to.equal(0);
      // A stream read by position crosses its read window too, the big frame included.
      const s0 = await log.read(0, "s0");
      expect(s0.map((e) => (e.body.length === big.length ? "big" : text(e.body).split(":")[0]))).to.deep.equal(
        written.filter((_, i) => i % 5 === 0),
      );
      await log.append(0, { stream: "s0", body: body("after") });
      await log.close();
    });

    it("after a crash, finds a stray byte far past the end of the data, beyond the first window, and zeroes it as a torn tail", async () => {
      await fill({ dir: dir(), segmentBytes: 64 * MIB }, 10);
      const [file] = segmentFiles(dir());
      const end = framesOf(file!).at(-1)!.end;
      wholeSegment(file!);
      flip(file!, 40 * MIB + 3, 0x10);
      // A process that never closed leaves no mark.
      for (const mark of cleanMarks(path.dirname(file!))) fs.rmSync(mark);

      const log = await openLocalLog({ dir: dir(), segmentBytes: 64 * MIB });
      expect(log.recovery).to.have.length(1);
      expect(log.recovery[0]).to.include({ kind: "torn-tail", offset: end, discardedBytes: 40 * MIB + 4 - end });
      expect(await allEntries(log)).to.deep.equal(records(0, 10));
      await log.close();
      expect(fs.readFileSync(file!)[40 * MIB + 3]).to.equal(0);
    });
  });

  describe("clean close", () => {
    it("marks where the data ends, and the next open reads nothing past it", async () => {
      await fill({ dir: dir(), segmentBytes: 64 * MIB }, 10);
      const [file] = segmentFiles(dir());
      const end = framesOf(file!).at(-1)!.end;
      expect(cleanMarks(path.dirname(file!)).map((m) => path.basename(m))).to.deep.equal([`clean-000000000001-${end}`]);
      // Past a clean close's end nothing was written, so a byte there is never taken for data.
      wholeSegment(file!);
      flip(file!, 40 * MIB + 3, 0x10);

      const log = await openLocalLog({ dir: dir(), segmentBytes: 64 * MIB });
      expect(log.recovery).to.deep.equal([]);
      expect(cleanMarks(path.dirname(file!)), "removed before the first append").to.deep.equal([]);
      expect(await allEntries(log)).to.deep.equal(records(0, 10));
      await log.append(0, { stream: "s0", body: Buffer.from("after") });
      await log.close();
      expect(fs.readFileSync(file!)[40 * MIB + 3]).to.equal(0x10);

      const again = await openLocalLog({ dir: dir(), segmentBytes: 64 * MIB });
      expect((await allEntries(again)).at(-1)).to.equal("after");
      await again.close();
    });

    it("reads the whole tail when the mark does not match where the data ends", async () => {
      await fill({ dir: dir(), segmentBytes: 64 * MIB }, 10);
      const [file] = segmentFiles(dir());
      const end = framesOf(file!).at(-1)!.end;
      const [mark] = cleanMarks(path.dirname(file!));
      fs.renameSync(mark!, path.join(path.dirname(file!), `clean-000000000001-${end - 1}`));
      wholeSegment(file!);
      flip(file!, 40 * MIB + 3, 0x10);

      const log = await openLocalLog({ dir: dir(), segmentBytes: 64 * MIB });
      expect(log.recovery).to.have.length(1);
      expect(log.recovery[0]).to.include({ kind: "torn-tail", offset: end });
      await log.close();
      expect(fs.readFileSync(file!)[40 * MIB + 3]).to.equal(0);
    });
    it("reads the whole tail when it finds more than one mark, and removes them all", async () => {
      await fill({ dir: dir(), segmentBytes: 64 * MIB }, 10);
      const [file] = segmentFiles(dir());
      const end = framesOf(file!).at(-1)!.end;
      fs.writeFileSync(path.join(path.dirname(file!), `clean-000000000001-${end + 100}`), "");
      wholeSegment(file!);
      flip(file!, 40 * MIB + 3, 0x10);

      const log = await openLocalLog({ dir: dir(), segmentBytes: 64 * MIB });
      expect(log.recovery).to.have.length(1);
      expect(log.recovery[0]).to.include({ kind: "torn-tail", offset: end });
      expect(cleanMarks(path.dirname(file!))).to.deep.equal([]);
      await log.close();
    });
  });

  describe("segments", () => {
    /** Bytes the files under `root` hold on disk (allocated blocks, not apparent sizes). */
    const allocated = (root: string): number =>
      fs.readdirSync(root, { recursive: true, withFileTypes: true }).reduce((sum, entry) => {
        if (!entry.isFile()) return sum;
        return sum + fs.statSync(path.join(entry.parentPath, entry.name)).blocks * 512;
      }, 0);

    it("creates a fresh directory small: the first segment of each shard grows, and only a filling one gets a prepared successor", async () => {
      const log = await openLocalLog({ dir: dir(), shards: 4 });
      // Four shards of the default 64 MiB segments: a quarter of a GiB if each were zero-filled at once.
      expect(allocated(dir())).to.be.at.most(4 * MIB + 64 * 1024);
      await log.close();
      expect(allocated(dir())).to.be.at.most(4 * MIB + 64 * 1024);

      // With small segments, the rule that prepares the next one once the active one is half full still holds.
      await fill({ dir: path.join(tmp(), "small"), segmentBytes: 64 * 1024 }, 3000);
      const files = segmentFiles(path.join(tmp(), "small"));
      expect(files.length).to.be.at.least(2);
      expect(fs.statSync(files.at(-1)!).size).to.equal(64 * 1024);
    });

    it("rolls over at segmentBytes and seals every segment but the newest", async () => {
      await fill({ dir: dir(), segmentBytes: 4096, preallocate: false }, 800);
      const files = segmentFiles(dir());
      expect(files.length).to.be.at.least(4);
      for (const file of files.slice(0, -1)) {
        expect(fs.statSync(file).size).to.be.at.most(4096);
        expect(framesOf(file).at(-1)!.kind).to.equal(FrameKind.Seal);
      }
      expect(framesOf(files.at(-1)!).every((f) => f.kind === FrameKind.Entry || f.kind === FrameKind.Batch)).to.equal(true);
      const log = await openLocalLog({ dir: dir(), segmentBytes: 4096 });
      expect(await allEntries(log)).to.deep.equal(records(0, 800));
      expect(log.streams(0).sort()).to.deep.equal(["s0", "s1", "s2"]);
      expect((await log.read(0, "s1")).map((e) => text(e.body))).to.deep.equal(records(0, 800).filter((_, i) => i % 3 === 1));
      await log.close();
    });

    it("compacts dropped streams away, frees their bytes and keeps them dropped after a reopen", async () => {
      const options = { dir: dir(), shards: 1, segmentBytes: 4096 };
      let log = await openLocalLog(options);
      for (let i = 0; i < 300; i++) await log.append(0, { stream: i % 2 === 0 ? "done" : "live", body: body(`r${i}`) });
      await log.drop(0, ["done"]);
      for (let i = 0; i < 60; i++) await log.append(0, { stream: "tail", body: body(`t${i}`) });
      const before = log.stats().bytes[0]!;
      const freed = await log.compact(0);
      expect(freed).to.be.greaterThan(0);
      expect(log.stats().bytes[0]).to.equal(before - freed);
      const live = (await log.read(0, "live")).map((e) => text(e.body));
      expect(live).to.have.length(150);
      await log.close();

      log = await openLocalLog(options);
      expect(await log.read(0, "done")).to.deep.equal([]);
      expect((await log.read(0, "live")).map((e) => text(e.body))).to.deep.equal(live);
      expect(log.stats().liveEntries[0]).to.equal(210);
      expect(await log.compact(0)).to.equal(0);
      await log.close();
    });
  });

  describe("compaction", () => {
    it("leaves sealed segments with nothing dropped as they are", async () => {
      await fill({ dir: dir(), segmentBytes: 4096 }, 600);
      const before = segmentFiles(dir()).map((f) => fs.readFileSync(f));
      const log = await openLocalLog({ dir: dir(), segmentBytes: 4096 });
      expect(await log.compact(0)).to.equal(0);
      await log.close();
      expect(
        segmentFiles(dir())
          .slice(0, -1)
          .map((f) => fs.readFileSync(f)),
      ).to.deep.equal(before.slice(0, -1));
    });
  });

  describe("compaction beside a scan", () => {
    it("waits for a scan reading a segment before replacing it, and the scan sees no dropped entry", async () => {
      const log = await openLocalLog({ dir: dir(), shards: 1, segmentBytes: 4096, preallocate: false });
      for (let i = 0; i < 400; i++) await log.append(0, { stream: i % 2 === 0 ? "a" : "b", body: body(`${i}`) });
      const scan = log.scan(0)[Symbol.asyncIterator]();
      const first = await scan.next();
      expect(text(first.value!.body)).to.equal("0");
      await log.drop(0, ["b"]);
      let compacted = false;
      const compaction = log.compact(0).then((freed) => {
        compacted = true;
        return freed;
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(compacted, "compaction finished while the scan held the first segment").to.equal(false);
      const rest: string[] = [];
      for (let r = await scan.next(); r.done !== true; r = await scan.next()) rest.push(text(r.value.body));
      expect(rest).to.deep.equal(Array.from({ length: 199 }, (_, i) => `${(i + 1) * 2}`));
      expect(await compaction).to.be.greaterThan(0);
      expect((await log.read(0, "a")).length).to.equal(200);
      await log.close();
    });
  });

  describe("flush methods", () => {
    for (const flush of ["fdatasync", "fsync", "dsync", "none"] as const) {
      it(`appends, rolls over and reopens with flush: "${flush}"`, async () => {
        const options = { dir: dir(), shards: 2, segmentBytes: 4096, flush };
        const payload = (i: number): string => `${i}-${"x".repeat(60)}`;
        let log = await openLocalLog(options);
        await Promise.all(Array.from({ length: 200 }, (_, i) => log.append(i % 2, { stream: `s${i % 5}`, body: body(payload(i)) })));
        for (let i = 200; i < 210; i++) await log.append(0, { stream: "seq", body: body(payload(i)) });
        await log.close();
        log = await openLocalLog(options);
        expect(log.stats().liveEntries).to.deep.equal([110, 100]);
        expect((await log.read(0, "seq")).map((e) => text(e.body))).to.deep.equal(Array.from({ length: 10 }, (_, i) => payload(200 + i)));
        expect(segmentFiles(dir(), 0).length).to.be.at.least(2);
        await log.close();
      });
    }
  });

  describe("manifest", () => {
    it("refuses another shard count with a ConfigError naming both counts and the directory", async () => {
      await (await openLocalLog({ dir: dir(), shards: 4 })).close();
      const err = await openError({ dir: dir(), shards: 8 });
      expect(err).to.be.instanceOf(ConfigError);
      expect(err.message).to.contain("4 shards").and.contain("8").and.contain(dir());
    });

    it("refuses a directory written by a newer format with a ConfigError", async () => {
      await (await openLocalLog({ dir: dir(), shards: 1 })).close();
      const file = path.join(dir(), "manifest.json");
      const manifest = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
      fs.writeFileSync(file, JSON.stringify({ ...manifest, format: 99 }));
      const err = await openError({ dir: dir() });
      expect(err).to.be.instanceOf(ConfigError);
      expect(err.message).to.contain("format 99");
    });

    it("needs a shard count to create a directory", async () => {
      const err = await openError({ dir: dir() });
      expect(err).to.be.instanceOf(ConfigError);
      expect(err.message).to.contain("shard count");
    });

    it("keeps the extra object set by updateManifest across a reopen", async () => {
      let log = await openLocalLog({ dir: dir(), shards: 2 });
      await log.updateManifest({ codecKeys: ["k1", "k2"] });
      expect(log.manifest.extra).to.deep.equal({ codecKeys: ["k1", "k2"] });
      await log.close();
      log = await openLocalLog({ dir: dir() });
      expect(log.manifest).to.include({ shards: 2, format: FORMAT_VERSION });
      expect(log.manifest.extra).to.deep.equal({ codecKeys: ["k1", "k2"] });
      expect(fs.readdirSync(dir())).to.not.include("manifest.json.tmp");
      await log.close();
    });
  });

  describe("files", () => {
    it("creates the data directory and its folders 0700 and its files 0600", async () => {
      await fill({ dir: dir(), shards: 2, segmentBytes: 4096 }, 100);
      const walk = (p: string): void => {
        const mode = fs.statSync(p).mode & 0o777;
        if (fs.statSync(p).isDirectory()) {
          expect(mode, p).to.equal(0o700);
          for (const name of fs.readdirSync(p)) walk(path.join(p, name));
        } else {
          expect(mode, p).to.equal(0o600);
        }
      };
      walk(dir());
    });
  });

  describe("read-only open", () => {
    it("reads beside a writer and stops at an incomplete tail without touching it", async () => {
      const writer = await openLocalLog({ dir: dir(), shards: 1, preallocate: false });
      for (let i = 0; i < 10; i++) await writer.append(0, { stream: "s", body: body(`record-${i}`) });
      const [file] = segmentFiles(dir());
      fs.appendFileSync(file!, Buffer.from([40, 0, 0, 0, 1, 2, 3]));
      const before = fs.readFileSync(file!);

      const reader = await openLocalLog({ dir: dir(), readOnly: true });
      expect(reader.readOnly).to.equal(true);
      expect(reader.recovery.map((e) => e.kind)).to.deep.equal(["incomplete-tail"]);
      expect(await allEntries(reader)).to.deep.equal(records(0, 10));
      expect((await reader.read(0, "s")).length).to.equal(10);
      expect(fs.readFileSync(file!).equals(before)).to.equal(true);
      await reader.close();
      await writer.close();
    });

    it("rejects append, drop, compact and updateManifest", async () => {
      await fill({ dir: dir() }, 3);
      const reader = await openLocalLog({ dir: dir(), readOnly: true });
      const attempts = [
        reader.append(0, { stream: "s", body: body("x") }),
        reader.drop(0, ["s0"]),
        reader.compact(0),
        reader.updateManifest({}),
      ];
      for (const attempt of attempts) {
        const err = await attempt.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).to.be.instanceOf(StorageError);
        expect((err as Error).message).to.contain("read-only");
      }
      await reader.close();
    });

    it("fails on a directory that does not exist", async () => {
      const err = await openError({ dir: dir(), readOnly: true });
      expect(err).to.be.instanceOf(StorageError);
      expect(fs.existsSync(dir())).to.equal(false);
    });
  });
});
