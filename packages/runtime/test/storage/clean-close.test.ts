import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { FrameKind } from "../../src/storage/frame.js";
import { type LocalLogOptions, openLocalLog } from "../../src/storage/index.js";
import { framesOf, segmentFiles } from "./support/segments.js";
import { useTempDir } from "./support/temp-dir.js";
import { openError } from "./support/open-error.js";

async function fill(options: LocalLogOptions, count: number): Promise<void> {
  const log = await openLocalLog({ shards: 1, ...options });
  for (let i = 0; i < count; i++) await log.append(0, { stream: `s${i % 3}`, body: Buffer.from(`record-${i}`) });
  await log.close();
}

function marks(shardDir: string): string[] {
  return fs.readdirSync(shardDir).filter((n) => n.startsWith("clean-"));
}

const entries = (file: string) => framesOf(file).filter((f) => f.kind === FrameKind.Entry);

describe("a shard closed cleanly", () => {
  const tmp = useTempDir("clean-close");
  const dir = (): string => path.join(tmp(), "data");

  it("refuses to open when its newest segment ends before the clean-close mark, naming shard, segment and offset", async () => {
    await fill({ dir: dir(), preallocate: false }, 20);
    const [file] = segmentFiles(dir());
    const cut = entries(file!).at(-3)!.end;
    const end = fs.statSync(file!).size;
    fs.truncateSync(file!, cut);

    const err = await openError({ dir: dir() });
    expect(err).to.be.instanceOf(StorageError);
    expect(err.message).to.contain("shard 0").and.contain(file!).and.contain(`offset ${cut}`).and.contain(String(end));
  });

  it("refuses to open when the tail of its preallocated newest segment was zeroed", async () => {
    await fill({ dir: dir(), segmentBytes: 64 * 1024 }, 20);
    const [file] = segmentFiles(dir());
    const lost = entries(file!).at(-1)!;
    const bytes = fs.readFileSync(file!);
    bytes.fill(0, lost.start, lost.end);
    fs.writeFileSync(file!, bytes);

    const err = await openError({ dir: dir(), segmentBytes: 64 * 1024 });
    expect(err).to.be.instanceOf(StorageError);
    expect(err.message).to.contain("shard 0").and.contain(file!).and.contain(`offset ${lost.start}`);
  });

  it("refuses to open when a byte of its last batch is flipped", async () => {
    await fill({ dir: dir(), preallocate: false }, 20);
    const [file] = segmentFiles(dir());
    const last = entries(file!).at(-1)!;
    const bytes = fs.readFileSync(file!);
    bytes[last.end - 1] = bytes[last.end - 1]! ^ 0x04;
    fs.writeFileSync(file!, bytes);

    const err = await openError({ dir: dir() });
    expect(err).to.be.instanceOf(StorageError);
    expect(err.message).to.contain("shard 0").and.contain(file!).and.contain("offset");
  });

  it("refuses to open when the segment its mark names is missing", async () => {
    await fill({ dir: dir(), segmentBytes: 4096, preallocate: false }, 600);
    const files = segmentFiles(dir());
    expect(files.length).to.be.at.least(3);
    fs.rmSync(files.at(-1)!);

    const err = await openError({ dir: dir(), segmentBytes: 4096 });
    expect(err).to.be.instanceOf(StorageError);
    expect(err.message).to.contain("shard 0").and.contain(files.at(-1)!).and.contain("missing");
  });

  it("refuses to open when its mark names a segment that is not the newest", async () => {
    await fill({ dir: dir(), segmentBytes: 4096, preallocate: false }, 600);
    const files = segmentFiles(dir());
    const shardDir = path.dirname(files[0]!);
    const [mark] = marks(shardDir);
    const seq = files.length - 1;
    fs.renameSync(path.join(shardDir, mark!), path.join(shardDir, `clean-${String(seq).padStart(12, "0")}-100`));

    const err = await openError({ dir: dir(), segmentBytes: 4096 });
    expect(err).to.be.instanceOf(StorageError);
    expect(err.message).to.contain("shard 0").and.contain(files.at(-2)!).and.contain(files.at(-1)!);
  });

  it("with repair, opens despite a mark naming a missing segment and reports that it ignored the mark", async () => {
    await fill({ dir: dir(), segmentBytes: 4096, preallocate: false }, 600);
    const files = segmentFiles(dir());
    fs.rmSync(files.at(-1)!);

    const log = await openLocalLog({ dir: dir(), segmentBytes: 4096, repair: true });
    expect(log.recovery).to.have.length(1);
    expect(log.recovery[0]).to.include({ kind: "repaired", shard: 0, segment: files.at(-1), discardedBytes: 0 });
    expect(log.recovery[0]!.reason).to.contain("is missing").and.contain("ignored");
    await log.close();
    const again = await openLocalLog({ dir: dir(), segmentBytes: 4096 });
    expect(again.recovery).to.deep.equal([]);
    await again.close();
  });

  it("opens with every record when nothing was damaged, and leaves no mark behind", async () => {
    await fill({ dir: dir(), segmentBytes: 4096, preallocate: false }, 300);
    const log = await openLocalLog({ dir: dir(), segmentBytes: 4096 });
    expect(log.recovery).to.deep.equal([]);
    expect(log.stats().liveEntries[0]).to.equal(300);
    await log.close();
    expect(marks(path.dirname(segmentFiles(dir())[0]!))).to.have.length(1);
  });
});
