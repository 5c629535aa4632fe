import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { RejectedError } from "../../src/core/errors.js";
import { eventually, localKind, onEachEngine, type EngineKind } from "../runtime/harness.js";

const startedFrom: number[] = [];
let attempts = 0;
const tokens: string[] = [];

@Workflow("export")
class Export {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<number> {
    return this.ctx.step(
      "export",
      async () => {
        const start = this.ctx.progress<number>() ?? 0;
        startedFrom.push(start);
        for (let p = start; p < 6; p++) {
          this.ctx.heartbeat(p + 1);
          await new Promise((r) => setTimeout(r, 15));
        }
        return 6;
      },
      { retry: RetryPolicy.exponential(3, "1ms", "5ms"), heartbeatTimeout: "200ms" },
    );
  }
}

@Workflow("stuck")
class Stuck {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<number> {
    return this.ctx.step(
      "slow",
      async () => {
        const n = attempts++;
        const start = this.ctx.progress<number>() ?? 0;
        this.ctx.heartbeat(start + 1);
        if (n === 0) await new Promise((r) => setTimeout(r, 3_000));
        return start;
      },
      { retry: RetryPolicy.exponential(3, "1ms", "5ms"), heartbeatTimeout: "100ms" },
    );
  }
}

@Workflow("approve")
class Approve {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<boolean> {
    return this.ctx.awaitCompletion<boolean>(
      "approval",
      async ({ token }) => {
        tokens.push(token);
        if (tokens.length === 1) throw new Error("mail server down");
      },
      { retry: RetryPolicy.exponential(3, "1ms", "2ms") },
    );
  }
}

onEachEngine("heartbeats", (kind) => {
  beforeEach(() => {
    attempts = 0;
  });

  it("retries a step that stopped heartbeating; the next attempt sees the last progress", async () => {
    const engine = await kind().open({ workflows: [Stuck] });
    const run = await engine.start(Stuck, "stuck-1", undefined);
    expect(await run.result()).to.equal(1);
    expect(attempts).to.equal(2);
    expect((await run.describe()).journal.some((r) => r.kind === "heartbeat")).to.equal(true);
    await engine.shutdown();
  });
});

describe("heartbeats and completions across a restart (local)", () => {
  let local: EngineKind;
  beforeEach(() => {
    startedFrom.length = 0;
    tokens.length = 0;
    local = localKind();
  });
  afterEach(() => local.cleanup());

  it("resumes a step from its durable progress after a restart", async () => {
    const first = await local.open({ workflows: [Export] });
    await first.start(Export, "exp-1", undefined);
    await new Promise((r) => setTimeout(r, 50));
    await first.shutdown();
    const engine = await local.reopen({ workflows: [Export] });
    expect(await engine.run<number>("exp-1").result()).to.equal(6);
    expect(startedFrom[0]).to.equal(0);
    expect(startedFrom[1], `the retry resumed from durable progress: ${startedFrom}`).to.be.greaterThan(0);
    await engine.shutdown();
  });

  it("accepts only the token of the attempt that was sent, once, also after a restart", async () => {
    const first = await local.open({ workflows: [Approve] });
    await first.start(Approve, "a-1", undefined);
    await eventually("two tokens", () => tokens.length === 2);
    await eventually("the token recorded", async () => (await first.describe("a-1"))!.journal.some((r) => r.kind === "step"));
    await first.shutdown();

    const engine = await local.reopen({ workflows: [Approve] });
    const stale = await engine.complete(tokens[0] as string, true).catch((e: unknown) => e);
    expect(stale).to.be.instanceOf(RejectedError);
    expect((stale as Error).message).to.contain("a-1");
    await engine.complete(tokens[1] as string, true);
    expect(await engine.run<boolean>("a-1").result()).to.equal(true);
    expect(await engine.complete(tokens[1] as string, false).catch((e: unknown) => e)).to.be.instanceOf(RejectedError);
    expect(tokens, "the token was not sent again").to.have.length(2);
    expect(await engine.complete("not-a-token", 1).catch((e: unknown) => e)).to.be.instanceOf(RejectedError);
    await engine.shutdown();
  });

  it("throws an answer given with engine.fail where the run waits", async () => {
    const engine = await local.open({ workflows: [Approve] });
    const run = await engine.start(Approve, "a-2", undefined);
    await eventually("two tokens", () => tokens.length === 2);
    await eventually("waiting", async () => (await run.status()).status === "suspended");
    await engine.fail(tokens[1] as string, new Error("denied by manager"));
    const err = await run.result().catch((e: unknown) => e);
    expect((err as Error).message).to.equal("denied by manager");
    await engine.shutdown();
  });
});
