import "reflect-metadata";
import { expect } from "chai";
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { RejectedError } from "../../src/core/errors.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { eventually, onEachEngine, sleep, tempDir } from "../runtime/harness.js";

let now = 0;
let max = 0;

@Workflow()
class Charge {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<void> {
    await this.ctx.step(
      "charge",
      async () => {
        max = Math.max(max, ++now);
        await sleep(20);
        now--;
      },
      { limit: "stripe" },
    );
  }
}

/** A body that outlives its attempt's timeout, ignoring its abort signal. */
@Workflow()
class Stubborn {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<void> {
    await this.ctx.step(
      "slow",
      async () => {
        max = Math.max(max, ++now);
        await sleep(120);
        now--;
      },
      { limit: "stripe", timeout: "20ms", retry: RetryPolicy.exponential(3, "1ms", "1ms") },
    );
  }
}

let open = false;
const served: string[] = [];

@Workflow()
class Hold {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<void> {
    await this.ctx.step(
      "hold",
      async () => {
        while (!open) await sleep(2);
      },
      { limit: "one" },
    );
  }
}

@Workflow()
class Job {
  constructor(private readonly ctx: Ctx) {}

  async run([level, key]: [number, string]): Promise<void> {
    await this.ctx.step("work", async () => void served.push(`${key}@${level}`), { limit: "one", priority: level, fairness: key });
  }
}

const attempts: string[] = [];

@Workflow()
class Flaky {
  constructor(private readonly ctx: Ctx) {}

  async run(name: string): Promise<number> {
    return (await this.ctx.step(
      "call",
      async () => {
        attempts.push(`${name}${this.ctx.attempt()}`);
        if (name === "flaky" && this.ctx.attempt() === 1) throw new Error("first attempt fails");
        return this.ctx.attempt();
      },
      { limit: "one", retry: RetryPolicy.exponential(2, "150ms", "150ms") },
    )) as number;
  }
}

@Workflow()
class Untamed {
  static ran = false;
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<void> {
    await this.ctx.step("go", async () => void (Untamed.ran = true), { limit: "nowhere" });
  }
}

const stamps: number[] = [];
let clock: { now(): number } = { now: () => 0 };

@Workflow()
class Paced {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<void> {
    await this.ctx.step("tick", async () => void stamps.push(clock.now()), { limit: "paced" });
  }
}

describe("limits", () => {
  onEachEngine("Engine.limit", (kind) => {
    beforeEach(() => {
      now = 0;
      max = 0;
      open = false;
      served.length = 0;
      attempts.length = 0;
    });

    it("bounds the steps that hold a permit at once", async () => {
      const engine = await kind().open({ workflows: [Charge] });
      engine.limit("stripe", { concurrent: 2, perSecond: 0 });
      const runs = [];
      for (let i = 0; i < 10; i++) runs.push(await engine.start(Charge, `c-${i}`, undefined));
      for (const r of runs) await r.result();
      expect(max).to.equal(2);
      expect(engine.limitInUse("stripe")).to.equal(0);
      await engine.shutdown();
    });

    it("keeps the permit of an attempt that timed out until its code returns, so bodies never outnumber the limit", async () => {
      const engine = await kind().open({ workflows: [Stubborn] });
      engine.limit("stripe", { concurrent: 1 });
      const runs = [];
      for (let i = 0; i < 2; i++) runs.push(await engine.start(Stubborn, `s-${i}`, undefined));
      for (const r of runs) await r.result().catch(() => undefined);
      await eventually("every body returned", () => now === 0);
      expect(max, "bodies that ran at once under concurrent: 1").to.equal(1);
      expect(engine.limitInUse("stripe")).to.equal(0);
      await engine.shutdown();
    });

    it("serves waiting steps by priority, then round-robin across fairness keys, then arrival", async () => {
      const engine = await kind().open({ workflows: [Hold, Job] });
      engine.limit("one", { concurrent: 1, perSecond: 0 });
      const blocker = await engine.start(Hold, "hold", undefined);
      await eventually("the blocker's permit", () => engine.limitInUse("one") === 1);
      const asks: Array<[number, string]> = [
        ...Array.from({ length: 6 }, () => [0, "big"] as [number, string]),
        [0, "a"],
        [0, "b"],
        [0, "a"],
        [0, "b"],
        [5, "urgent"],
      ];
      const runs = [];
      for (const [i, ask] of asks.entries()) {
        runs.push(await engine.start(Job, `job-${i}`, ask));
        await eventually("the step to queue", () => engine.limitWaiting("one") === i + 1);
      }
      open = true;
      await blocker.result();
      for (const r of runs) await r.result();
      expect(served).to.deep.equal(["urgent@5", "big@0", "a@0", "b@0", "big@0", "a@0", "b@0", "big@0", "big@0", "big@0", "big@0"]);
      expect(engine.limitInUse("one")).to.equal(0);
      expect(engine.limitWaiting("one")).to.equal(0);
      await engine.shutdown();
    });

    it("holds no permit while a step backs off between attempts", async () => {
      const engine = await kind().open({ workflows: [Flaky], limits: { one: { concurrent: 1 } } });
      const flaky = await engine.start(Flaky, "flaky", "flaky");
      await eventually("the first attempt", () => attempts.length === 1);
      const steady = await engine.start(Flaky, "steady", "steady");
      expect(await steady.result()).to.equal(1);
      expect(await flaky.result()).to.equal(2);
      expect(attempts).to.deep.equal(["flaky1", "steady1", "flaky2"]);
      await engine.shutdown();
    });

    it("fails a step naming an undeclared limit with RejectedError, without running it", async () => {
      Untamed.ran = false;
      const engine = await kind().open({ workflows: [Untamed] });
      const run = await engine.start(Untamed, "untamed", undefined);
      const error = await run.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(RejectedError);
      expect((error as Error).message)
        .to.contain("'nowhere'")
        .and.contain("engine.limit");
      expect(Untamed.ran).to.equal(false);
      expect(() => engine.limitInUse("nowhere")).to.throw(RejectedError, "no limit is named 'nowhere'");
      await engine.shutdown();
    });
  });

  describe("with a rate (virtual clock)", () => {
    it("spaces attempts 1000 / perSecond ms apart", async () => {
      stamps.length = 0;
      const engine = await TestEngine.create({ workflows: [Paced] });
      clock = engine.clock;
      engine.limit("paced", { perSecond: 2 });
      const t0 = engine.clock.now();
      const runs = [];
      for (let i = 0; i < 6; i++) runs.push(await engine.start(Paced, `p-${i}`, undefined));
      await engine.clock.advance("3s");
      for (const r of runs) await r.result();
      // The first permit comes one interval after the limit is declared: none is in hand at the start.
      expect(stamps.map((t) => t - t0)).to.deep.equal([500, 1000, 1500, 2000, 2500, 3000]);
      await engine.shutdown();
    });

    it("holds the rate across a restart: the first permit after it is one interval away", async () => {
      stamps.length = 0;
      let engine = await TestEngine.create({ workflows: [Paced], limits: { paced: { perSecond: 1 } } });
      clock = engine.clock;
      const before = await engine.start(Paced, "before-restart", undefined);
      await engine.clock.advance("1s");
      await before.result();
      // A crash loop would otherwise start a step at every open.
      for (let restart = 0; restart < 3; restart++) {
        engine = await engine.restart();
        await engine.start(Paced, `after-restart-${restart}`, undefined);
        await engine.clock.advance("500ms");
      }
      await engine.clock.advance("3s");
      for (let restart = 0; restart < 3; restart++) await engine.run(`after-restart-${restart}`).result();
      expect(stamps).to.have.length(4);
      const gaps = stamps.slice(1).map((t, i) => t - (stamps[i] as number));
      expect(
        gaps.every((gap) => gap >= 1000),
        `gaps between permits: ${gaps.join(", ")} ms`,
      ).to.equal(true);
      await engine.shutdown();
    });

    it("rejects a spec that cannot work", async () => {
      const engine = await TestEngine.create();
      expect(() => engine.limit("bad", { concurrent: -1 })).to.throw(/concurrent must be a whole number/);
      expect(() => engine.limit("bad", { perSecond: Number.NaN })).to.throw(/perSecond must be a finite number/);
      await engine.shutdown();
    });
  });

  describe("after a crash (local, a real process)", function () {
    this.timeout(30_000);

    it("releases the permits a process held when it died", async () => {
      const dir = tempDir("limits-crash");
      try {
        const holder = fileURLToPath(new URL("./fixtures/permit-holder.js", import.meta.url));
        const child = spawn(process.execPath, [holder, dir], { stdio: ["ignore", "pipe", "pipe"] });
        let stderr = "";
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        await new Promise<void>((resolve, reject) => {
          child.stdout.once("data", () => resolve());
          child.once("exit", (code) => reject(new Error(`holder exited ${code} before taking the permit: ${stderr}`)));
        });
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        await exited;

        @Workflow("Holder")
        class Holder {
          constructor(private readonly ctx: Ctx) {}

          async run(): Promise<string> {
            return (await this.ctx.step("hold", async () => "released", { limit: "one" })) as string;
          }
        }
        const engine = await Engine.open(Config.local(dir).shards(2), { workflows: [Holder], limits: { one: { concurrent: 1 } } });
        expect(await engine.run<string>("holder-1").result()).to.equal("released");
        const next = await engine.start(Holder, "holder-2", undefined);
        expect(await next.result()).to.equal("released");
        expect(engine.limitInUse("one")).to.equal(0);
        await engine.shutdown();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
