import { expect } from "chai";
import { SourceError } from "../src/index.js";
import { Scenario } from "./support/scenario.js";

const CLEAN = `import { Workflow, Step, Query, Ctx } from "@fusee/runtime";

@Workflow()
export class Clock {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<number> {
    const at = new Date(this.ctx.now());
    const id = this.ctx.uuid();
    await this.ctx.sleep("1s");
    await this.ctx.step("stamp", async () => Date.now() + Math.random());
    return at.getTime() + id.length + (await this.fetchRate());
  }

  @Step() async fetchRate(): Promise<number> {
    const res = await fetch("https://rates.example/eur");
    return Number(process.env.RATE ?? (await res.text())) + Date.now();
  }

  @Query() age(): number { return Date.now(); }
}
`;

const DIRTY = `import { randomUUID } from "node:crypto";
import { Workflow, Ctx } from "@fusee/runtime";

@Workflow()
export class Clock {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<number> {
    const a = Date.now();
    const b = new Date();
    const c = Math.random();
    const d = crypto.randomUUID() + randomUUID();
    setTimeout(() => undefined, 10);
    setInterval(() => undefined, 10);
    await fetch("https://rates.example/eur");
    const e = process.env.RATE;
    return a + b.getTime() + c + d.length + (e?.length ?? 0);
  }
}
`;

describe("the determinism check of workflow code", () => {
  let scenario: Scenario;

  before(function () {
    this.timeout(60_000);
    scenario = Scenario.create({ "src/clock.ts": CLEAN });
  });

  after(() => scenario.remove());

  it("accepts the clock, randomness, timers and I/O inside steps and queries, and ctx's deterministic forms outside", () => {
    expect(scenario.generate().workflows.map((w) => w.type)).to.deep.equal(["Clock"]);
  });

  it("refuses each non-deterministic call outside steps, naming file:line and the fix", () => {
    scenario.write("src/clock.ts", DIRTY);
    const error = scenario.failure();
    expect(error).to.be.instanceOf(SourceError);
    const problems = (error as SourceError).problems.map((p) => ({ code: p.code, line: p.at.line, what: p.message.split(" in workflow")[0], fix: p.message.split("Fix: ")[1] }));
    expect(problems.map((p) => p.code)).to.satisfy((codes: string[]) => codes.every((c) => c === "FUSEE_GEN_NONDETERMINISM"));
    expect(problems.map((p) => [p.line, p.what])).to.deep.equal([
      [9, "Date.now()"],
      [10, "new Date()"],
      [11, "Math.random()"],
      [12, "crypto.randomUUID()"],
      [12, "randomUUID()"],
      [13, "setTimeout()"],
      [14, "setInterval()"],
      [15, "fetch()"],
      [16, "process.env"],
    ]);
    expect(problems[0]?.fix).to.contain("this.ctx.now()");
    expect(problems[2]?.fix).to.contain("this.ctx.random()");
    expect(problems[3]?.fix).to.contain("this.ctx.uuid()");
    expect(problems[5]?.fix).to.contain("this.ctx.sleep");
    expect(problems[7]?.fix).to.contain("in a step");
    expect((error as SourceError).message).to.contain("src/clock.ts:9:");
    scenario.write("src/clock.ts", CLEAN);
  });

  it("leaves a project's own functions of the same names alone", () => {
    const own = `import { Workflow, Ctx } from "@fusee/runtime";

const Math = { random: () => 4 };
function fetch(url: string): number { return url.length; }

@Workflow()
export class Clock {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<number> { return Math.random() + fetch("x"); }
}
`;
    scenario.write("src/clock.ts", own);
    expect(scenario.generate({ acceptBreaking: true }).workflows).to.have.length(1);
    scenario.write("src/clock.ts", CLEAN);
  });
});
