import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Step, Workflow } from "../../src/workflow/decorators.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { NotFoundError } from "../../src/core/errors.js";
import type { Config } from "../../src/engine/config.js";
import { eventually, localKind, type EngineKind } from "./harness.js";

const ran: string[] = [];
let release: (() => void) | undefined;
let blockSecond = true;

@Workflow()
class TwoSteps {
  constructor(private readonly ctx: Ctx) {}

  async run(n: number): Promise<string> {
    const a = await this.first(n);
    const b = await this.second(a);
    return `${a}-${b}`;
  }

  @Step() async first(n: number): Promise<number> {
    ran.push(`first:${this.ctx.workflowId}`);
    return n * 2;
  }

  @Step({ retry: RetryPolicy.none() })
  async second(a: number): Promise<number> {
    ran.push(`second:${this.ctx.workflowId}`);
    if (blockSecond) await new Promise<void>((r) => (release = r));
    return a + 1;
  }
}

let unstick: (() => void) | undefined;

@Workflow()
class Stuck {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    return this.ctx.step("call", async () => {
      ran.push(`call:${this.ctx.workflowId}`);
      await new Promise<void>((r) => (unstick = r));
      return "answered";
    });
  }
}

@Workflow()
class Waiting {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<unknown> {
    return this.ctx.waitFor("go");
  }
}

@Workflow()
class Sleepy {
  constructor(private readonly ctx: Ctx) {}

  async run(n: number): Promise<number> {
    const v = await this.ctx.step("work", async () => {
      ran.push(`work:${n}`);
      return n;
    });
    await this.ctx.sleep("50ms");
    return v * 3;
  }
}

describe("restarts (local)", () => {
  let local: EngineKind;
  beforeEach(() => {
    ran.length = 0;
    blockSecond = true;
    local = localKind();
  });
  afterEach(async () => {
    release?.();
    await local.cleanup();
  });

  it("re-runs a step that was in flight at shutdown, but not the steps already journaled", async () => {
    const first = await local.open({ workflows: [TwoSteps] });
    await first.start(TwoSteps, "two-1", 5);
    await eventually("the second step to start", () => ran.includes("second:two-1"));
    await first.shutdown();
    release?.();
    blockSecond = false;

    const engine = await local.reopen({ workflows: [TwoSteps] });
    expect(await engine.run<string>("two-1").result()).to.equal("10-11");
    expect(ran).to.deep.equal(["first:two-1", "second:two-1", "second:two-1"]);
    await engine.shutdown();
  });

  it("resumes a run with work to do although the cache is full of runs that only wait", async () => {
    const first = await local.open({ workflows: [Waiting, TwoSteps] }, (c) => c.cache(1));
    await first.start(Waiting, "waiting-1", undefined);
    await first.start(TwoSteps, "two-2", 1);
    await eventually("the second step to start", () => ran.includes("second:two-2"));
    await first.shutdown();
    release?.();
    blockSecond = false;

    const engine = await local.reopen({ workflows: [Waiting, TwoSteps] }, (c) => c.cache(1));
    expect(await engine.run<string>("two-2").result()).to.equal("2-3");
    expect((await engine.status("waiting-1"))?.status).to.be.oneOf(["suspended", "parked"]);
    await engine.run("waiting-1").signal("go", "now");
    expect(await engine.run("waiting-1").result()).to.equal("now");
    await engine.shutdown();
  });

  it("resumes a run with work to do although the cache is full of a run whose step runs", async () => {
    const settings = (c: Config): Config => c.shards(1).cache(1);
    const first = await local.open({ workflows: [Stuck, TwoSteps] }, settings);
    await first.start(Stuck, "stuck-1", undefined);
    await first.start(TwoSteps, "two-3", 1);
    await eventually("both steps to start", () => ran.includes("call:stuck-1") && ran.includes("second:two-3"));
    await first.shutdown();
    unstick?.();
    release?.();
    blockSecond = false;

    const engine = await local.reopen({ workflows: [Stuck, TwoSteps] }, settings);
    await eventually("the stuck step to run again", () => ran.filter((r) => r === "call:stuck-1").length === 2);
    expect(await engine.run<string>("two-3").result()).to.equal("2-3");
    unstick?.();
    expect(await engine.run<string>("stuck-1").result()).to.equal("answered");
    await engine.shutdown();
  });

  it("resumes every unfinished run on open, whether it was running or parked", async () => {
    const first = await local.open({ workflows: [Sleepy] }, (c) => c.cache(3));
    for (let i = 0; i < 12; i++) await first.start(Sleepy, `sleepy-${i}`, i);
    await eventually("every step journaled", () => ran.length === 12);
    await first.shutdown();

    const engine = await local.reopen({ workflows: [Sleepy] }, (c) => c.cache(3));
    for (let i = 0; i < 12; i++) expect(await engine.run<number>(`sleepy-${i}`).result()).to.equal(i * 3);
    expect(ran, "no journaled step ran again").to.have.length(12);
    const listed = await engine.list(100);
    expect(listed.filter((s) => s.status === "ok")).to.have.length(12);
    await engine.shutdown();
  });

  it("answers result, status and describe of runs finished before the restart", async () => {
    blockSecond = false;
    const first = await local.open({ workflows: [TwoSteps] });
    const run = await first.start(TwoSteps, "two-done", 1);
    expect(await run.result()).to.equal("2-3");
    await first.shutdown();

    const engine = await local.reopen({ workflows: [TwoSteps] });
    const again = engine.run<string>("two-done");
    expect(await again.result()).to.equal("2-3");
    const status = await again.status();
    expect(status.status).to.equal("ok");
    expect(status.type).to.equal("TwoSteps");
    expect((await again.describe()).journal.map((r) => r.kind)).to.deep.equal(["start", "step", "step", "finish"]);
    await engine.shutdown();
  });

  it("shows a run whose type is not registered as stopped, naming why, and runs it once it is", async () => {
    const first = await local.open({ workflows: [Sleepy] });
    await first.start(Sleepy, "sleepy-late", 7);
    await first.shutdown();

    const engine = await local.reopen({});
    const status = await engine.status("sleepy-late");
    expect(status?.status).to.equal("stopped");
    expect(status?.error).to.contain("'Sleepy' of run 'sleepy-late' is not registered");
    expect(
      await engine
        .run("sleepy-late")
        .result()
        .catch((e: unknown) => e),
      "its result fails at once, naming why",
    ).to.be.instanceOf(NotFoundError);
    engine.register(Sleepy);
    expect(await engine.run<number>("sleepy-late").result()).to.equal(21);
    await engine.shutdown();
  });
});
