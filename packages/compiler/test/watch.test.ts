import { rmSync } from "node:fs";
import { expect } from "chai";
import { BreakingChangeError, generate, type GenerateResult, watch, type Watcher } from "../src/index.js";
import { Fixture } from "./support/fixture.js";
import { MODELS, PAY, PAYMENTS } from "./support/sources.js";

type Outcome = { result: GenerateResult; changed: readonly string[] } | { error: unknown; changed: readonly string[] };

/** Collects what the watcher reports and lets a specification wait for the next report. */
class Reports {
  readonly all: Outcome[] = [];
  private waiting: ((o: Outcome) => void) | undefined;

  push(outcome: Outcome): void {
    this.all.push(outcome);
    this.waiting?.(outcome);
    this.waiting = undefined;
  }

  next(ms = 5000): Promise<Outcome> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no regeneration within ${ms} ms`)), ms);
      this.waiting = (o) => {
        clearTimeout(timer);
        resolve(o);
      };
    });
  }
}

describe("watch", () => {
  let fixture: Fixture;
  let watcher: Watcher;
  const reports = new Reports();

  before(async function () {
    this.timeout(60_000);
    fixture = Fixture.create({ "src/models.ts": MODELS, "src/payments.ts": PAYMENTS, "src/pay.ts": PAY });
    watcher = await watch(
      { project: fixture.dir },
      { onResult: (result, changed) => reports.push({ result, changed }), onError: (error, changed) => reports.push({ error, changed }) },
    );
  });

  after(async () => {
    await watcher.close();
    fixture.remove();
  });

  it("generates once when it starts", () => {
    expect(reports.all).to.have.length(1);
    expect(fixture.exists("src/fusee.generated.ts")).to.equal(true);
  });

  it("regenerates within a second of a change, reporting the changed file", async () => {
    const next = reports.next();
    const started = Date.now();
    fixture.write(
      "src/pay.ts",
      PAY.replace(
        "@Query() list(): string[] {",
        "@Query() size(): number {\n    return this.items.length;\n  }\n\n  @Query() list(): string[] {",
      ),
    );
    const outcome = await next;
    expect(Date.now() - started).to.be.below(1000);
    expect(outcome.changed).to.deep.equal([fixture.path("src/pay.ts")]);
    expect("result" in outcome && outcome.result.files.find((f) => f.kind === "client")?.status).to.equal("written");
    expect(fixture.read("src/fusee.generated.ts")).to.contain("  size(): Promise<number>;");
  });

  it("reports a breaking change without writing, and keeps watching", async () => {
    const lock = fixture.read("fusee.lock.json");
    let next = reports.next();
    fixture.write(
      "src/pay.ts",
      PAY.replace("const amount = await this.charge(quote);", "await this.quote(1);\n    const amount = await this.charge(quote);"),
    );
    const outcome = await next;
    expect("error" in outcome && outcome.error).to.be.instanceOf(BreakingChangeError);
    expect(fixture.read("fusee.lock.json")).to.equal(lock);

    next = reports.next();
    fixture.write("src/pay.ts", PAY);
    const fixed = await next;
    expect("result" in fixed && fixed.result.ok).to.equal(true);
    expect(fixture.read("src/fusee.generated.ts")).not.to.contain("size()");
  });

  it("picks up a new file holding a workflow", async () => {
    const next = reports.next();
    fixture.write(
      "src/refund.ts",
      `import { Workflow } from "@fusee/runtime";\n\n@Workflow()\nexport class Refund {\n  async run(cents: number): Promise<number> {\n    return cents;\n  }\n}\n`,
    );
    const outcome = await next;
    expect("result" in outcome && outcome.result.workflows.map((w) => w.type)).to.deep.equal(["Pay", "Refund"]);
    expect(fixture.read("src/fusee.generated.ts")).to.contain("export class RefundClient {");
  });

  it("notices a folder of workflows removed at once", async () => {
    let next = reports.next();
    fixture.write(
      "src/extra/late.ts",
      `import { Workflow } from "@fusee/runtime";\n\n@Workflow()\nexport class Late {\n  async run(): Promise<void> {}\n}\n`,
    );
    await next;
    next = reports.next();
    rmSync(fixture.path("src/extra"), { recursive: true });
    const outcome = await next;
    expect("error" in outcome && outcome.error).to.be.instanceOf(BreakingChangeError);
    expect(("error" in outcome && (outcome.error as BreakingChangeError).changes.map((c) => [c.kind, c.workflow])) || []).to.deep.equal([
      ["workflow-removed", "Late"],
    ]);
  });

  it("regenerates nothing after it is closed", async () => {
    const count = reports.all.length;
    await watcher.close();
    fixture.write("src/pay.ts", `${PAY}\n// after close\n`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(reports.all).to.have.length(count);
  });
});

describe("watch, against a fresh generation", () => {
  it("writes byte for byte what fusee gen writes, through edits of several files", async function () {
    this.timeout(60_000);
    const fixture = Fixture.create({ "src/models.ts": MODELS, "src/payments.ts": PAYMENTS, "src/pay.ts": PAY });
    const reports = new Reports();
    const watcher = await watch(
      { project: fixture.dir },
      { onResult: (result, changed) => reports.push({ result, changed }), onError: (error, changed) => reports.push({ error, changed }) },
    );
    const outputs = ["src/fusee.generated.ts", "src/fusee.workflows.generated.ts", "fusee.lock.json"];
    try {
      const edits: [string, string][] = [
        ["src/pay.ts", `${PAY}\n// an edit\n`],
        ["src/models.ts", `${MODELS}\nexport class Coupon {\n  constructor(public code: string) {}\n}\n`],
        [
          "src/pay.ts",
          PAY.replace(
            "@Query() list(): string[] {",
            "@Query() size(): number {\n    return this.items.length;\n  }\n\n  @Query() list(): string[] {",
          ),
        ],
      ];
      for (const [path, content] of edits) {
        const next = reports.next();
        fixture.write(path, content);
        const outcome = await next;
        expect("result" in outcome, `regenerated after editing ${path}`).to.equal(true);
        const watched = outputs.map((f) => fixture.read(f));
        const fresh = await generate({ project: fixture.dir, check: true });
        expect(
          fresh.files.map((f) => f.status),
          `fusee gen --check after editing ${path}`,
        ).to.deep.equal(["current", "current", "current"]);
        await generate({ project: fixture.dir });
        expect(
          outputs.map((f) => fixture.read(f)),
          `files after editing ${path}`,
        ).to.deep.equal(watched);
      }
      expect(fixture.read("src/fusee.workflows.generated.ts")).to.contain('import { Ctx, registerWorkflowTypes } from "@fusee/runtime";');
    } finally {
      await watcher.close();
      fixture.remove();
    }
  });
});
