import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Query, Signal, Workflow } from "../../src/workflow/decorators.js";
import { RejectedError } from "../../src/core/errors.js";
import { TestEngine } from "../../src/testing/index.js";
import { eventually, localKind, onEachEngine } from "./harness.js";

@Workflow()
class Approval {
  private approved: boolean | undefined;
  private readonly notes: string[] = [];
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string> {
    const first = await this.ctx.waitFor<number>("go");
    const second = await this.ctx.waitFor<number>("go");
    const timedOut = await this.ctx.waitFor<number>("never", { timeout: "30ms" });
    const held = await this.ctx.condition(() => this.approved !== undefined);
    const late = await this.ctx.condition(() => this.notes.length > 5, { timeout: "20ms" });
    return `${first},${second},${String(timedOut)},${held},${this.approved},${late},${this.notes.join("+")}`;
  }

  @Signal() approve(ok: boolean): void {
    this.approved = ok;
  }

  @Signal() note(text: string): void {
    this.notes.push(text);
  }

  @Query() state(): { approved: boolean | undefined; notes: string[] } {
    return { approved: this.approved, notes: this.notes };
  }
}

@Workflow()
class Napper {
  constructor(private readonly ctx: Ctx) {}

  async run(ms: number): Promise<number> {
    const before = this.ctx.now();
    await this.ctx.sleep(ms);
    return this.ctx.now() - before;
  }
}

@Workflow()
class Reminder {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string[]> {
    const sent: string[] = [];
    for (const day of [1, 2, 3]) {
      await this.ctx.sleep("1d");
      sent.push(await this.ctx.step(`remind-${day}`, async () => `day ${day}`));
    }
    return sent;
  }
}

onEachEngine("signals and timers", (kind) => {
  it("buffers signals for waitFor in order, times out waits, and wakes conditions from handlers", async () => {
    const engine = await kind().open({ workflows: [Approval] });
    const run = await engine.start(Approval, "a-1", undefined);
    await run.signal("go", 1);
    await run.signal("go", 2);
    await run.signal("note", "x");
    await eventually("the condition wait", async () => (await run.status()).status === "suspended");
    expect(await run.query("state")).to.deep.equal({ approved: undefined, notes: ["x"] });
    await run.signal("approve", true);
    expect(await run.result()).to.equal("1,2,undefined,true,true,false,x");
    await engine.shutdown();
  });

  it("sleeps durably for the requested time", async () => {
    const engine = await kind().open({ workflows: [Napper] });
    const run = await engine.start(Napper, "n-1", 40);
    const slept = await run.result();
    expect(slept).to.be.at.least(40);
    const kinds = (await run.describe()).journal.map((r) => r.kind);
    expect(kinds).to.deep.equal(["start", "timer", "fired", "finish"]);
    await engine.shutdown();
  });

  it("rejects a signal to a finished run", async () => {
    const engine = await kind().open({ workflows: [Napper] });
    const run = await engine.start(Napper, "n-2", 0);
    await run.result();
    const err = await run.signal("late", 1).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RejectedError);
    expect((err as Error).message)
      .to.contain("n-2")
      .and.contain("finished");
    await engine.shutdown();
  });
});

describe("timers across a restart (local)", () => {
  it("fires a timer that fell due while the process was down at once after open", async () => {
    const local = localKind();
    try {
      const first = await local.open({ workflows: [Napper] });
      await first.start(Napper, "n-down", 150);
      await eventually("the timer record", async () => (await first.describe("n-down"))!.journal.some((r) => r.kind === "timer"));
      await first.shutdown();
      await new Promise((r) => setTimeout(r, 200));
      const engine = await local.reopen({ workflows: [Napper] });
      const opened = Date.now();
      expect(await engine.run<number>("n-down").result()).to.be.at.least(150);
      expect(Date.now() - opened, "fired at once, not after another full delay").to.be.below(140);
      await engine.shutdown();
    } finally {
      await local.cleanup();
    }
  });
});

/** Three timers pending at once in one run: two sleeps and a wait's timeout. */
@Workflow()
class ThreeTimers {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string[]> {
    const order: string[] = [];
    const nap = async (ms: number, name: string): Promise<void> => {
      await this.ctx.sleep(ms);
      order.push(name);
    };
    const wait = async (): Promise<void> => {
      order.push(`wait ${String(await this.ctx.waitFor("never", { timeout: "200ms" }))}`);
    };
    await Promise.all([nap(300, "long"), nap(100, "short"), wait()]);
    return order;
  }
}

describe("several timers of one run", () => {
  it("fires each of three timers pending at once, in due order, on the virtual clock", async () => {
    const engine = await TestEngine.create({ workflows: [ThreeTimers] });
    const run = await engine.start(ThreeTimers, "three", undefined);
    await engine.clock.advance("150ms");
    expect((await run.describe()).journal.filter((r) => r.kind === "fired")).to.have.length(1);
    await engine.clock.advance("200ms");
    expect(await run.result()).to.deep.equal(["short", "wait undefined", "long"]);
    await engine.shutdown();
  });

  it("keeps all three pending across a restart and fires each once after it", async () => {
    const local = localKind();
    try {
      const first = await local.open({ workflows: [ThreeTimers] });
      await first.start(ThreeTimers, "three-down", undefined);
      await eventually(
        "three timer records",
        async () => (await first.describe("three-down"))!.journal.filter((r) => r.kind === "timer").length === 3,
      );
      await first.shutdown();
      const engine = await local.reopen({ workflows: [ThreeTimers] });
      expect(await engine.run<string[]>("three-down").result()).to.deep.equal(["short", "wait undefined", "long"]);
      const kinds = (await engine.describe("three-down"))!.journal.map((r) => r.kind);
      expect(kinds.filter((k) => k === "fired")).to.have.length(3);
      await engine.shutdown();
    } finally {
      await local.cleanup();
    }
  });
});

describe("TestEngine", () => {
  it("runs a three-day workflow in milliseconds on its virtual clock", async () => {
    const engine = await TestEngine.create({ workflows: [Reminder] });
    const run = await engine.start(Reminder, "r-1", undefined);
    await engine.clock.advance("1d");
    expect((await run.describe()).journal.filter((r) => r.kind === "step")).to.have.length(1);
    await engine.clock.advance("2d");
    expect(await run.result()).to.deep.equal(["day 1", "day 2", "day 3"]);
    await engine.shutdown();
  });

  it("fires wait timeouts only when the clock passes them", async () => {
    const engine = await TestEngine.create({ workflows: [Approval] });
    const run = await engine.start(Approval, "a-virtual", undefined);
    await run.signal("go", 1);
    await run.signal("go", 2);
    await engine.clock.advance("29ms");
    expect((await run.describe()).journal.some((r) => r.kind === "fired")).to.equal(false);
    await engine.clock.advance("1ms");
    expect((await run.describe()).journal.filter((r) => r.kind === "fired")).to.have.length(1);
    await run.signal("approve", false);
    await engine.clock.advance("20ms");
    expect(await run.result()).to.equal("1,2,undefined,true,false,false,");
    await engine.shutdown();
  });
});
