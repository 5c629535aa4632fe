import "reflect-metadata";
import { expect } from "chai";
import fs from "node:fs";
import { StorageError } from "../../src/core/errors.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import type { EngineEvent } from "../../src/index.js";
import { FrameKind } from "../../src/storage/frame.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { framesOf, segmentFiles } from "../storage/support/segments.js";
import { tempDir } from "./harness.js";

@Workflow("count")
class Count {
  constructor(private readonly ctx: Ctx) {}
  async run(n: number): Promise<number> {
    return this.ctx.step("count", async () => n);
  }
}

describe("Config.local(dir).repair()", function () {
  this.timeout(30_000);
  let dir: string;
  const config = (): Config => Config.local(dir).shards(1).segmentBytes(4096);

  beforeEach(async () => {
    dir = tempDir("repair");
    const engine = await Engine.open(config(), { workflows: [Count] });
    for (let i = 0; i < 60; i++) await (await engine.start(Count, `c-${i}`, i)).result();
    await engine.shutdown();
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("cuts a shard at corruption the plain open refuses, and reports the cut through onEvent", async () => {
    const files = segmentFiles(dir);
    expect(files.length).to.be.at.least(3);
    const frames = framesOf(files[1]!);
    const bad = frames.filter((f) => f.kind === FrameKind.Entry)[4]!;
    const batch = frames[frames.indexOf(bad) - 1]!;
    const bytes = fs.readFileSync(files[1]!);
    bytes[bad.end - 1] = bytes[bad.end - 1]! ^ 0x08;
    fs.writeFileSync(files[1]!, bytes);

    const refused = await Engine.open(config(), { workflows: [Count] }).catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(StorageError);
    expect((refused as Error).message)
      .to.contain(`Config.local("${dir}").repair()`)
      .and.contain(`fusee repair --data ${dir}`);

    const told: EngineEvent[] = [];
    const engine = await Engine.open(config().repair(), { workflows: [Count], onEvent: (e) => told.push(e) });
    try {
      expect(told).to.have.length(1);
      expect(told[0]).to.deep.include({ kind: "recovery-cut", shard: 0, segment: files[1], offset: batch.start });
      expect((told[0] as { discardedBytes: number }).discardedBytes).to.be.greaterThan(4096);
      expect((told[0] as { reason: string }).reason).to.contain("repair");
      expect(engine.recoveryEvents()).to.deep.equal(told);
      expect(await engine.run("c-0").result()).to.equal(0);
      expect(await engine.status("c-59")).to.equal(undefined);
    } finally {
      await engine.shutdown();
    }

    const again = await Engine.open(config(), { workflows: [Count] });
    expect(again.recoveryEvents()).to.deep.equal([]);
    await again.shutdown();
  });

  it("changes nothing and reports nothing when nothing is damaged", async () => {
    const told: EngineEvent[] = [];
    const engine = await Engine.open(config().repair(), { workflows: [Count], onEvent: (e) => told.push(e) });
    expect(told).to.deep.equal([]);
    expect(await engine.run("c-59").result()).to.equal(59);
    await engine.shutdown();
  });
});
