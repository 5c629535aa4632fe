import "reflect-metadata";
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { aesGcm, type PayloadCipher } from "../../src/codec/index.js";
import { CodecError } from "../../src/core/errors.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";

@Workflow("sealed-out")
class SealedOut {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    return this.ctx.step("secret", async () => "never journaled");
  }
}

/** A cipher that stops sealing after `allowed` payloads, as one past its key's limit does. */
function exhaustedAfter(allowed: number): PayloadCipher {
  const inner = aesGcm({ k1: randomBytes(32) });
  let sealed = 0;
  return {
    algorithm: inner.algorithm,
    keyIds: inner.keyIds,
    encryptingKeyId: inner.encryptingKeyId,
    seal(plain, aad) {
      if (++sealed > allowed) throw new CodecError(`key "k1" may seal no more payloads`);
      return inner.seal(plain, aad);
    },
    open: (sealedBytes, aad) => inner.open(sealedBytes, aad),
    keyIdOf: (sealedBytes) => inner.keyIdOf(sealedBytes),
    sealedCount: (id) => inner.sealedCount(id),
  };
}

describe("a run whose outcome cannot be sealed", () => {
  it("stops with the codec's error instead of hanging or crashing the process", async () => {
    const engine = await Engine.open(Config.memory().codec(exhaustedAfter(1)), { workflows: [SealedOut] });
    const run = await engine.start(SealedOut, "s-1", undefined);
    const err = await run.result().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(CodecError);
    expect((err as Error).message).to.contain('"k1"');
    const status = await run.status();
    expect(status.status).to.equal("stopped");
    expect(status.error).to.contain("no more payloads");
    await engine.shutdown();
  });
});
