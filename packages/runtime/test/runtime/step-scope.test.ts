import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Signal, Step, Update, Workflow } from "../../src/workflow/decorators.js";
import type { Engine } from "../../src/engine/engine.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { eventually, localKind, type EngineKind } from "./harness.js";

/** The engine the workflows below reach from inside their steps, as an injected service would. */
let engine: Engine;
const keys: string[] = [];

@Workflow()
class Callee {
  private go = false;
  constructor(private readonly ctx: Ctx) {}

  async run(n: number): Promise<number> {
    const first = await this.add(n);
    await this.ctx.condition(() => this.go);
    return this.add(first);
  }

  @Step() async add(n: number): Promise<number> {
    keys.push(`add:${this.ctx.key()}`);
    return n + 1;
  }

  @Signal() proceed(): void {
    this.go = true;
  }

  @Update() async bump(by: number): Promise<number> {
    return this.ctx.step("bump", async () => {
      keys.push(`bump:${this.ctx.key()}`);
      return by * 10;
    });
  }
}

@Workflow()
class Caller {
  constructor(private readonly ctx: Ctx) {}

  async run(order: { calleeId: string; signal: boolean }): Promise<string> {
    await this.ctx.step("start callee", async () => {
      await engine.start(Callee, order.calleeId, 1);
      return true;
    });
    const bumped = await this.ctx.step("update callee", async () => engine.run(order.calleeId).update<number>("bump", 4));
    if (order.signal) {
      await this.ctx.step("signal callee", async () => {
        await engine.run(order.calleeId).signal("proceed", undefined);
        return true;
      });
    }
    return `bumped ${bumped}`;
  }
}

@Workflow()
class SelfUpdating {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<number> {
    return this.ctx.step("outer", async () => engine.run(this.ctx.workflowId).update<number>("inc", 1));
  }

  @Update() async inc(n: number): Promise<number> {
    return this.ctx.step("inner", async () => {
      keys.push(`inner:${this.ctx.key()}`);
      return n + 1;
    });
  }
}

function stepNames(journal: readonly { kind: string; name?: string }[]): string[] {
  return journal.filter((r) => r.kind === "step").map((r) => r.name as string);
}

describe("a step that starts, updates or signals another workflow", () => {
  beforeEach(() => {
    keys.length = 0;
  });

  it("journals the other workflow's steps in its own run, with its own keys (TestEngine)", async () => {
    const test = await TestEngine.create({ workflows: [Caller, Callee] });
    engine = test;
    try {
      expect(await test.start(Caller, "caller-1", { calleeId: "callee-1", signal: true }).then((r) => r.result())).to.equal("bumped 40");
      expect(await test.run<number>("callee-1").result()).to.equal(3);
      const callee = await test.describe("callee-1");
      expect(stepNames(callee!.journal)).to.deep.equal(["add", "bump", "add"]);
      expect(stepNames((await test.describe("caller-1"))!.journal)).to.deep.equal(["start callee", "update callee", "signal callee"]);
      expect(keys).to.have.length(3);
      for (const key of keys) expect(key).to.match(/^(add|bump):callee-1:1\.[0-9a-z]+:\d+$/);
    } finally {
      await test.shutdown();
    }
  });

  it("journals a step of an update handler that a step of the same run sent", async () => {
    const test = await TestEngine.create({ workflows: [SelfUpdating] });
    engine = test;
    try {
      expect(await test.start(SelfUpdating, "self-1", undefined).then((r) => r.result())).to.equal(2);
      expect(stepNames((await test.describe("self-1"))!.journal)).to.deep.equal(["inner", "outer"]);
      expect(keys).to.have.length(1);
      expect(keys[0]).to.match(/^inner:self-1:1\.[0-9a-z]+:2$/);
    } finally {
      await test.shutdown();
    }
  });

  describe("on the local engine", () => {
    let kind: EngineKind;
    beforeEach(() => {
      kind = localKind();
    });
    afterEach(() => kind.cleanup());

    it("leaves the other workflow a journal that replays after a restart", async () => {
      engine = await kind.open({ workflows: [Caller, Callee] });
      expect(await (await engine.start(Caller, "caller-2", { calleeId: "callee-2", signal: false })).result()).to.equal("bumped 40");
      await eventually("the callee waits", async () => (await engine.status("callee-2"))?.status === "suspended");
      await engine.shutdown();

      engine = await kind.reopen({ workflows: [Caller, Callee] });
      const callee = engine.run<number>("callee-2");
      await eventually("the callee resumes", async () => (await callee.status()).status === "suspended");
      await callee.signal("proceed", undefined);
      expect(await callee.result()).to.equal(3);
      expect(stepNames((await engine.describe("callee-2"))!.journal)).to.deep.equal(["add", "bump", "add"]);
      expect(keys).to.have.length(3);
      for (const key of keys) expect(key).to.match(/^(add|bump):callee-2:1\.[0-9a-z]+:\d+$/);
      await engine.shutdown();
    });
  });
});
