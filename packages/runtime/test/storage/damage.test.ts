import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { FrameKind } from "../../src/storage/frame.js";
import { LocalLog, openLocalLog } from "../../src/storage/index.js";
import { Random } from "./support/memory-file-layer.js";
import { type FrameAt, framesOf, segmentFiles } from "./support/segments.js";

const FLIPS = 60;
const CUTS = 40;
const RECORDS = 700;
const OPTIONS = { segmentBytes: 4096, preallocate: true } as const;

interface Template {
  readonly dir: string;
  /** Every entry frame, in log order, with the record it holds. */
  readonly frames: FrameAt[];
}

async function makeTemplate(root: string): Promise<Template> {
  const dir = path.join(root, "template");
  const log = await openLocalLog({ dir, shards: 1, ...OPTIONS });
  for (let i = 0; i < RECORDS; i++) await log.append(0, { stream: `s${i % 3}`, body: Buffer.from(`record-${i}`) });
  await log.close();
  const frames = segmentFiles(dir).flatMap((f) => framesOf(f).filter((x) => x.kind === FrameKind.Entry));
  expect(frames).to.have.length(RECORDS);
  expect(segmentFiles(dir).length).to.be.at.least(4);
  return { dir, frames };
}

/**
 * Opens damaged data and checks that nothing went missing unsaid: either the open fails with a
 * `StorageError` naming the damaged file and an offset at or before the damage, or every record
 * that is gone lies at or after an offset that `recovery` reports in its segment.
 */
async function expectNoSilentLoss(t: Template, dir: string, file: string, damageAt: number, what: string): Promise<string> {
  let log: LocalLog;
  try {
    log = await openLocalLog({ dir, ...OPTIONS });
  } catch (err) {
    expect(err, what).to.be.instanceOf(StorageError);
    const message = (err as Error).message;
    expect(message, what).to.contain("shard 0").and.contain(file);
    const offset = Number(/at offset (\d+)/.exec(message)?.[1]);
    expect(offset, `${what}: ${message}`).to.be.at.most(damageAt);
    return "refused";
  }
  try {
    const present: string[] = [];
    for await (const e of log.scan(0)) present.push(Buffer.from(e.body).toString());
    const expected = t.frames.map((f) => f.payload);
    const kept = expected.slice(0, present.length);
    expect(present, `${what}: a clean prefix`).to.deep.equal(kept);
    for (const lost of t.frames.slice(present.length)) {
      const local = path.join(dir, path.relative(t.dir, lost.file));
      const covered = log.recovery.some((e) => e.segment === local && e.offset <= lost.start);
      expect(covered, `${what}: ${lost.payload} went missing without a recovery event`).to.equal(true);
    }
    return log.recovery.length > 0 ? "cut" : "intact";
  } finally {
    await log.close();
  }
}

describe(`${LocalLog.name} on damaged files`, function () {
  this.timeout(60_000);
  let root: string;
  let template: Template;
  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "fusee-damage-"));
    template = await makeTemplate(root);
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  /**
   * A copy of the template. Without its clean-close mark it is what a crash leaves, where damage in
   * the last batch looks like a torn write; with the mark, any damage to the data is refused.
   */
  const copy = (n: string, rng: Random): string => {
    const dir = path.join(root, n);
    fs.cpSync(template.dir, dir, { recursive: true });
    if (rng.next() < 0.5) {
      const shardDir = path.join(dir, "shard-0000");
      for (const name of fs.readdirSync(shardDir)) if (name.startsWith("clean-")) fs.rmSync(path.join(shardDir, name));
    }
    return dir;
  };

  it(`cuts tail damage after a crash and refuses all other damage, never dropping a record unsaid, over ${FLIPS} random bit flips`, async () => {
    const rng = new Random(42);
    const outcomes = new Set<string>();
    for (let i = 0; i < FLIPS; i++) {
      const dir = copy(`flip-${i}`, rng);
      const files = segmentFiles(dir);
      // Half the flips hit the newest segment, whose tail is where torn writes live: a quarter its
      // last frame or the zeros after it.
      const file = rng.next() < 0.5 ? files.at(-1)! : files[rng.int(0, files.length)]!;
      const bytes = fs.readFileSync(file);
      const frames = framesOf(file);
      const dataEnd = frames.at(-1)!.end;
      const tail = file === files.at(-1) && rng.next() < 0.5;
      const at = tail ? rng.int(frames.at(-1)!.start, bytes.length) : rng.next() < 0.8 ? rng.int(0, dataEnd) : rng.int(0, bytes.length);
      bytes[at] = bytes[at]! ^ (1 << rng.int(0, 8));
      fs.writeFileSync(file, bytes);
      outcomes.add(await expectNoSilentLoss(template, dir, file, at, `flip ${i} at ${file}:${at}`));
      fs.rmSync(dir, { recursive: true });
    }
    // "intact" when a flip hit the zeros past a clean close's end, which are never read as data:
    // whether the newest segment was preallocated depends on the template's timing.
    expect([...outcomes]).to.include.members(["cut", "refused"]);
  });

  it(`does the same over ${CUTS} random truncations that cut through a frame`, async () => {
    const rng = new Random(4242);
    const outcomes = new Set<string>();
    for (let i = 0; i < CUTS; i++) {
      const dir = copy(`cut-${i}`, rng);
      const files = segmentFiles(dir);
      const file = rng.next() < 0.5 ? files.at(-1)! : files[rng.int(0, files.length)]!;
      // A cut exactly between two frames of the newest segment looks like a shorter log and
      // cannot be told apart from one; cuts land inside a frame.
      const frame = framesOf(file)[rng.int(0, framesOf(file).length)]!;
      const at = rng.int(frame.start + 1, frame.end);
      fs.truncateSync(file, at);
      outcomes.add(await expectNoSilentLoss(template, dir, file, at, `cut ${i} at ${file}:${at}`));
      fs.rmSync(dir, { recursive: true });
    }
    expect([...outcomes].sort()).to.deep.equal(["cut", "refused"]);
  });
});
