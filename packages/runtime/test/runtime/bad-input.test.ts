import { expect } from "chai";
import type { Duration } from "../../src/core/duration.js";
import { Config } from "../../src/engine/config.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Step, Workflow } from "../../src/workflow/decorators.js";
import { registerStep, registerWorkflow } from "../../src/workflow/registry.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { CodecError, ConfigError, NotFoundError, RejectedError } from "../../src/core/errors.js";
import { onEachEngine } from "./harness.js";

@Workflow()
class Echo {
  constructor(private readonly ctx: Ctx) {}
  async run(v: unknown): Promise<unknown> {
    return this.ctx.step("echo", async () => v);
  }
}

class NotAWorkflow {
  async run(): Promise<void> {}
}

onEachEngine("bad input", (kind) => {
  async function expectNothingStarted(engine: Awaited<ReturnType<ReturnType<typeof kind>["open"]>>): Promise<void> {
    expect(await engine.list(10)).to.deep.equal([]);
  }

  it("rejects an unknown workflow type by name, listing the registered ones", async () => {
    const engine = await kind().open({ workflows: [Echo] });
    const err = await engine.start("Nope", "x-1", 1).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(NotFoundError);
    expect((err as Error).message).to.contain("'Nope'").and.contain("'Echo'");
    const cls = await engine.start(NotAWorkflow as never, "x-2", 1).catch((e: unknown) => e);
    expect(cls).to.be.instanceOf(ConfigError);
    expect((cls as Error).message).to.contain("NotAWorkflow").and.contain("@Workflow");
    await expectNothingStarted(engine);
    await engine.shutdown();
  });

  it("rejects inputs that cannot be serialized, naming where", async () => {
    const engine = await kind().open({ workflows: [Echo] });
    const fn = await engine.start(Echo, "x-3", { cb: () => 1 }).catch((e: unknown) => e);
    expect(fn).to.be.instanceOf(CodecError);
    expect((fn as Error).message).to.contain("cb");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const cycle = await engine.start(Echo, "x-4", cyclic).catch((e: unknown) => e);
    expect(cycle).to.be.instanceOf(CodecError);
    expect((cycle as Error).message).to.contain("self");
    await expectNothingStarted(engine);
    await engine.shutdown();
  });

  it("rejects empty and over-long IDs", async () => {
    const engine = await kind().open({ workflows: [Echo] });
    expect(await engine.start(Echo, "", 1).catch((e: unknown) => e)).to.be.instanceOf(RejectedError);
    const long = await engine.start(Echo, "x".repeat(1001), 1).catch((e: unknown) => e);
    expect(long).to.be.instanceOf(RejectedError);
    expect((long as Error).message).to.contain("1001").and.contain("1000");
    expect(await engine.start(Echo, "x".repeat(1000), 1).then((r) => r.result())).to.equal(1);
    await engine.shutdown();
  });

  it("refuses a payload limit the logs cannot hold", () => {
    for (const bytes of [512, 256 * 1024 * 1024 + 1, 1024.5, Number.NaN]) {
      expect(() => Config.memory().maxPayloadBytes(bytes), String(bytes)).to.throw(ConfigError, /maxPayloadBytes/);
    }
    expect(Config.memory().maxPayloadBytes(256 * 1024 * 1024).settings.maxPayloadBytes).to.equal(256 * 1024 * 1024);
  });

  it("rejects payloads over the configured limit", async () => {
    const engine = await kind().open({ workflows: [Echo] }, (c) => c.maxPayloadBytes(64 * 1024));
    const err = await engine.start(Echo, "x-5", "y".repeat(100 * 1024)).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RejectedError);
    expect((err as Error).message).to.contain("x-5").and.contain("65536");
    await expectNothingStarted(engine);
    await engine.shutdown();
  });

  it("rejects an unknown run for signals, queries and updates", async () => {
    const engine = await kind().open({ workflows: [Echo] });
    const run = engine.run("ghost");
    for (const attempt of [run.signal("go"), run.query("q"), run.update("u", 1), run.status()]) {
      const err = await attempt.catch((e: unknown) => e);
      expect(err).to.be.instanceOf(NotFoundError);
      expect((err as Error).message).to.contain("'ghost'");
    }
    await engine.shutdown();
  });
});

describe("decorator validation", () => {
  it("refuses bad step options when the decorator runs", () => {
    class W {
      async run(): Promise<void> {}
      async s(): Promise<void> {}
    }
    expect(() => registerStep(W, "s", { timeout: "soon" as string as Duration })).to.throw(ConfigError, /timeout/);
    expect(() => registerStep(W, "s", { retry: { maxAttempts: 3 } as unknown as RetryPolicy })).to.throw(ConfigError, /RetryPolicy/);
    expect(() => registerStep(W, "nope")).to.throw(ConfigError, /W\.nope is not a method/);
    expect(() => registerWorkflow(class NoRun {} as never)).to.throw(ConfigError, /run\(input\)/);
    expect(() => RetryPolicy.exponential(0)).to.throw(ConfigError, /maxAttempts/);
  });

  it("refuses two steps of one workflow with the same name", () => {
    expect(() => {
      @Workflow()
      class Twice {
        async run(): Promise<void> {}
        @Step({ name: "same" }) async a(): Promise<void> {}
        @Step({ name: "same" }) async b(): Promise<void> {}
      }
      return Twice;
    }).to.throw(ConfigError, /share the step name 'same'/);
  });
});
