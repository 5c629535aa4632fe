import "reflect-metadata";
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { aesGcm } from "../../src/codec/index.js";
import { CodecError, ConfigError, StorageError } from "../../src/core/errors.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { FrameKind } from "../../src/storage/frame.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { framesOf, segmentFiles } from "../storage/support/segments.js";
import { tempDir } from "./harness.js";

@Workflow("tally")
class Tally {
  constructor(private readonly ctx: Ctx) {}
  async run(n: number): Promise<number> {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += await this.ctx.step(`add-${i}`, async () => i);
    return sum;
  }
}

/** Every file under `dir` with its bytes, and every folder, by relative path. */
function snapshot(dir: string): Map<string, Buffer | "folder"> {
  const out = new Map<string, Buffer | "folder">();
  const walk = (rel: string): void => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const child = path.join(rel, name);
      if (fs.statSync(path.join(dir, child)).isDirectory()) {
        out.set(child, "folder");
        walk(child);
      } else out.set(child, fs.readFileSync(path.join(dir, child)));
    }
  };
  walk("");
  return out;
}

function shardDir(dir: string, shard: number): string {
  return path.dirname(segmentFiles(dir, shard)[0]!);
}

/** Makes shard `shard` look crashed: no clean-close mark, and half a batch after its data. */
function tearTail(dir: string, shard: number): void {
  const folder = shardDir(dir, shard);
  for (const name of fs.readdirSync(folder)) if (name.startsWith("clean-")) fs.rmSync(path.join(folder, name));
  const file = segmentFiles(dir, shard).at(-1)!;
  const end = framesOf(file).at(-1)!.end;
  const fd = fs.openSync(file, "r+");
  fs.writeSync(fd, Buffer.from([23, 0, 0, 0, 1, 2, 3, 4, 4, 0, 0]), 0, 11, end);
  fs.closeSync(fd);
}

describe("an engine open that is refused", function () {
  this.timeout(30_000);
  const k1 = randomBytes(32);
  let dir: string;

  beforeEach(async () => {
    dir = tempDir("refused-open");
    const engine = await Engine.open(Config.local(dir).shards(2).segmentBytes(4096).codec(aesGcm({ k1 })), { workflows: [Tally] });
    for (let i = 0; i < 8; i++) await (await engine.start(Tally, `t-${i}`, 12)).result();
    await engine.shutdown();
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function expectRefusedUnchanged(config: Config, kind: new (...args: never[]) => Error): Promise<Error> {
    const before = snapshot(dir);
    const err = await Engine.open(config, { workflows: [Tally] }).then(
      async (engine) => {
        await engine.shutdown();
        throw new Error("the engine opened");
      },
      (e: unknown) => e as Error,
    );
    expect(err).to.be.instanceOf(kind);
    expect(snapshot(dir)).to.deep.equal(before);
    return err;
  }

  it("leaves the directory byte for byte as it was when a later shard is corrupt after an earlier shard's torn tail", async () => {
    tearTail(dir, 0);
    const [entry] = framesOf(segmentFiles(dir, 1)[0]!).filter((f) => f.kind === FrameKind.Entry);
    const file = segmentFiles(dir, 1)[0]!;
    const bytes = fs.readFileSync(file);
    bytes[entry!.end - 1] = bytes[entry!.end - 1]! ^ 0x01;
    fs.writeFileSync(file, bytes);

    const err = await expectRefusedUnchanged(Config.local(dir).shards(2).segmentBytes(4096).codec(aesGcm({ k1 })), StorageError);
    expect(err.message).to.contain("shard 1").and.contain(file);
  });

  it("leaves the directory byte for byte as it was when the codec keys are wrong", async () => {
    tearTail(dir, 0);
    const err = await expectRefusedUnchanged(
      Config.local(dir)
        .shards(2)
        .segmentBytes(4096)
        .codec(aesGcm({ k2: randomBytes(32) })),
      CodecError,
    );
    expect(err.message).to.contain("k1");
  });

  it("leaves the directory byte for byte as it was when the shard count differs", async () => {
    tearTail(dir, 0);
    await expectRefusedUnchanged(Config.local(dir).shards(4).segmentBytes(4096).codec(aesGcm({ k1 })), ConfigError);
  });

  it("cuts the torn tail once the open succeeds", async () => {
    tearTail(dir, 0);
    const engine = await Engine.open(Config.local(dir).shards(2).segmentBytes(4096).codec(aesGcm({ k1 })), { workflows: [Tally] });
    expect(await engine.run("t-7").result()).to.equal(66);
    await engine.shutdown();
    const file = segmentFiles(dir, 0).at(-1)!;
    expect(
      fs
        .readFileSync(file)
        .subarray(framesOf(file).at(-1)!.end)
        .every((b) => b === 0),
    ).to.equal(true);
  });
});
