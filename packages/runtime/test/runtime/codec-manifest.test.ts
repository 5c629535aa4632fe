import "reflect-metadata";
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { aesGcm } from "../../src/codec/index.js";
import { CodecError, ConfigError } from "../../src/core/errors.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { tempDir } from "./harness.js";

@Workflow("note")
class Note {
  constructor(private readonly ctx: Ctx) {}
  async run(text: string): Promise<string> {
    return this.ctx.step("echo", async () => text);
  }
}

describe("encryption settings in the data directory (local)", () => {
  const k1 = randomBytes(32);
  const k2 = randomBytes(32);
  let dir: string;
  beforeEach(() => {
    dir = tempDir("codec-manifest");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses to open an encrypted directory without a cipher, or with none of its keys", async () => {
    const first = await Engine.open(Config.local(dir).codec(aesGcm({ k1 })), { workflows: [Note] });
    await (await first.start(Note, "n-1", "secret")).result();
    await first.shutdown();

    const plain = await Engine.open(Config.local(dir), { workflows: [Note] }).catch((e: unknown) => e);
    expect(plain).to.be.instanceOf(CodecError);
    expect((plain as Error).message)
      .to.contain("encrypted")
      .and.contain("k1");
    const wrong = await Engine.open(Config.local(dir).codec(aesGcm({ k2 })), { workflows: [Note] }).catch((e: unknown) => e);
    expect(wrong).to.be.instanceOf(CodecError);
    expect((wrong as Error).message)
      .to.contain("k1")
      .and.contain("k2");

    const rotated = await Engine.open(Config.local(dir).codec(aesGcm({ k2, k1 })), { workflows: [Note] });
    expect(await rotated.run("n-1").result()).to.equal("secret");
    await rotated.shutdown();
  });

  it("refuses to encrypt a directory that already holds plaintext runs", async () => {
    const first = await Engine.open(Config.local(dir), { workflows: [Note] });
    await (await first.start(Note, "n-2", "open")).result();
    await first.shutdown();
    const err = await Engine.open(Config.local(dir).codec(aesGcm({ k1 })), { workflows: [Note] }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message).to.contain("without encryption");
  });
});
