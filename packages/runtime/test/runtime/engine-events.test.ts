import "reflect-metadata";
import { expect } from "chai";
import fs from "node:fs";
import path from "node:path";
import { StorageError } from "../../src/core/errors.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import type { EngineEvent } from "../../src/index.js";
import { nodeFileLayer } from "../../src/storage/file-layer.js";
import { FrameKind } from "../../src/storage/frame.js";
import { openLocalLog } from "../../src/storage/index.js";
import { type Format1Entry, writeFormat1Dir } from "../storage/fixtures/format-1-dir.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { framesOf, segmentFiles } from "../storage/support/segments.js";
import { tempDir } from "./harness.js";

@Workflow("echo")
class Echo {
  constructor(private readonly ctx: Ctx) {}
  async run(text: string): Promise<string> {
    return this.ctx.step("echo", async () => text);
  }
}

describe("what opening the engine's storage reports", function () {
  this.timeout(30_000);
  let dir: string;
  const config = (): Config => Config.local(dir).shards(1);

  beforeEach(async () => {
    dir = tempDir("engine-events");
    const engine = await Engine.open(config(), { workflows: [Echo] });
    for (let i = 0; i < 5; i++) await (await engine.start(Echo, `e-${i}`, `text-${i}`)).result();
    await engine.shutdown();
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("tells onEvent of a torn tail cut after a crash, and keeps it in recoveryEvents()", async () => {
    const file = segmentFiles(dir).at(-1)!;
    const folder = path.dirname(file);
    for (const name of fs.readdirSync(folder)) if (name.startsWith("clean-")) fs.rmSync(path.join(folder, name));
    const end = framesOf(file).at(-1)!.end;
    const fd = fs.openSync(file, "r+");
    fs.writeSync(fd, Buffer.from([23, 0, 0, 0, 1, 2, 3, 4, 4, 7]), 0, 10, end);
    fs.closeSync(fd);

    const told: EngineEvent[] = [];
    const engine = await Engine.open(config(), { workflows: [Echo], onEvent: (e) => told.push(e) });
    try {
      expect(told).to.have.length(1);
      expect(told[0]).to.deep.include({ kind: "recovery-cut", shard: 0, segment: file, offset: end, discardedBytes: 10 });
      expect((told[0] as { reason: string }).reason).to.contain("did not finish");
      expect(engine.recoveryEvents()).to.deep.equal(told);
      expect(await engine.run("e-4").result()).to.equal("text-4");
    } finally {
      await engine.shutdown();
    }
  });

  it("reports nothing after a clean close", async () => {
    const told: EngineEvent[] = [];
    const engine = await Engine.open(config(), { workflows: [Echo], onEvent: (e) => told.push(e) });
    expect(told).to.deep.equal([]);
    expect(engine.recoveryEvents()).to.deep.equal([]);
    await engine.shutdown();
  });

  it("tells onEvent that a directory of format 1 was moved to the current format, and its runs carry on", async () => {
    // The same records as the engine wrote them, laid out as format 1 wrote them.
    const log = await openLocalLog({ dir, readOnly: true });
    const records: Format1Entry[] = [];
    for await (const e of log.scan(0)) records.push({ stream: e.stream, body: e.body });
    await log.close();
    const old = `${dir}-format-1`;
    writeFormat1Dir(nodeFileLayer, old, [{ segments: [records] }]);

    const told: EngineEvent[] = [];
    const engine = await Engine.open(Config.local(old).shards(1), { workflows: [Echo], onEvent: (e) => told.push(e) });
    try {
      expect(told).to.deep.equal([{ kind: "format-migrated", from: 1, to: 2, dir: old }]);
      expect(engine.recoveryEvents()).to.deep.equal(told);
      expect(await engine.run("e-3").result()).to.equal("text-3");
      expect(await (await engine.start(Echo, "e-new", "new")).result()).to.equal("new");
    } finally {
      await engine.shutdown();
      fs.rmSync(old, { recursive: true, force: true });
    }
  });

  it("refuses a cleanly closed directory whose newest segment lost its last batches, rather than showing finished runs running", async () => {
    const file = segmentFiles(dir).at(-1)!;
    const batches = framesOf(file).filter((f) => f.kind === FrameKind.Batch);
    fs.truncateSync(file, batches.at(-3)!.start);

    const err = await Engine.open(config(), { workflows: [Echo] }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message)
      .to.contain("shard 0")
      .and.contain(file)
      .and.contain(`offset ${batches.at(-3)!.start}`);
  });
});
