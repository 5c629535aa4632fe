import { expect } from "chai";
import { BreakingChangeError, SourceError } from "../src/index.js";
import { Scenario } from "./support/scenario.js";

interface Source {
  body?: string;
  patches?: string[];
  decorator?: string;
  className?: string;
  quoteResult?: string;
  chargeParam?: string;
  extra?: string;
}

const BODY = `
    const price = await this.quote(id);
    await this.ctx.waitFor<boolean>("go");
    const receipt = await this.charge(price.cents);
    await this.ctx.sleep("1d");
    return receipt;`;

/** A workflow that waits for "go" and sleeps, so that its steps are ones runs in flight have recorded. */
function invoice({
  body = BODY,
  patches = [],
  decorator,
  className = "Invoice",
  quoteResult = "{ cents: number }",
  chargeParam = "number",
  extra = "",
}: Source = {}): string {
  return `import { Workflow, Step, Ctx } from "@fusee/runtime";

export class Price {
  constructor(public cents = 0) {}
  withTax(): number { return this.cents * 1.2; }
}

export interface Billing { bill(ctx: Ctx): Promise<void>; }

${decorator ?? `@Workflow({ name: "Invoice", patches: [${patches.map((p) => JSON.stringify(p)).join(", ")}] })`}
export class ${className} {
  constructor(private readonly ctx: Ctx, private readonly billing: Billing) {}

  async run(id: string): Promise<string> {${body}
  }

  @Step() async quote(id: string): Promise<${quoteResult}> { return { cents: id.length } as never; }
  @Step() async charge(cents: ${chargeParam}): Promise<string> { return String(cents); }
  @Step() async audit(): Promise<void> {}
${extra}
}
`;
}

const FILE = "src/invoice.ts";

describe("what gen reports of a change", () => {
  let scenario: Scenario;

  before(function () {
    this.timeout(60_000);
    scenario = Scenario.create({ [FILE]: invoice() });
  });

  afterEach(() => scenario.reset());
  after(() => scenario.remove());

  function refusal(source: string): BreakingChangeError {
    scenario.write(FILE, source);
    const error = scenario.failure();
    expect(error).to.be.instanceOf(BreakingChangeError);
    return error as BreakingChangeError;
  }

  it("refuses a call handed ctx whose body gen cannot read, saying what to change", () => {
    scenario.write(
      FILE,
      invoice({ body: BODY.replace("await this.ctx.sleep", "await this.billing.bill(this.ctx);\n    await this.ctx.sleep") }),
    );
    const error = scenario.failure();
    expect(error).to.be.instanceOf(SourceError);
    const [problem] = (error as SourceError).problems;
    expect(problem?.code).to.equal("FUSEE_GEN_UNRESOLVED_CALL");
    expect(problem?.at).to.deep.equal({ file: FILE, line: 18 });
    expect(problem?.message).to.contain("this.billing.bill() is handed the workflow's ctx").and.to.contain("Fix:");
  });

  it("names a renamed patch ID as such", () => {
    const guarded = (id: string) => BODY.replace("const receipt", `if (this.ctx.patched("${id}")) await this.audit();\n    const receipt`);
    scenario.write(FILE, invoice({ body: guarded("audit"), patches: ["audit"] }));
    scenario.generate();
    const error = refusal(invoice({ body: guarded("audit-v2"), patches: ["audit-v2"] }));
    expect(error.changes.map((c) => [c.kind, c.step])).to.deep.equal([["patch-renamed", "audit"]]);
    expect(error.message).to.contain('patch ID "audit" was renamed to "audit-v2"').and.to.contain('keep the ID "audit"');
  });

  it("refuses to drop a guard whose arms call the same step, since runs recorded its marker", () => {
    const guarded = BODY.replace(
      "await this.charge(price.cents)",
      'this.ctx.patched("round") ? await this.charge(Math.round(price.cents)) : await this.charge(price.cents)',
    );
    scenario.write(FILE, invoice({ body: guarded, patches: ["round"] }));
    scenario.generate();
    const error = refusal(
      invoice({ body: BODY.replace("this.charge(price.cents)", "this.charge(Math.round(price.cents))"), patches: ["round"] }),
    );
    expect(error.changes.map((c) => [c.kind, c.step])).to.deep.equal([["removed", "round"]]);
    expect(error.message).to.contain('recorded the marker "round"').and.to.contain('ctx.deprecatePatch("round")');
  });

  it("suggests keeping the old type name when the workflow class is renamed", () => {
    const error = refusal(invoice({ decorator: "@Workflow()", className: "Bill" }));
    expect(error.changes.map((c) => c.kind)).to.deep.equal(["workflow-removed"]);
    expect(error.message).to.contain('@Workflow("Invoice")').and.to.contain("class Bill");
  });

  it("never proposes a patch ID holding ${…} for a step whose name is computed", () => {
    const error = refusal(
      invoice({ body: BODY.replace("const receipt", "await this.ctx.step(`fetch-${id}`, async () => 1);\n    const receipt") }),
    );
    expect(error.changes.map((c) => c.step)).to.deep.equal(["fetch-${…}"]);
    expect(error.message).to.contain('patched("add-fetch-x")');
    expect(error.message).not.to.match(/patched\("[^"]*\$\{/);
  });

  it("shows both shapes, and the methods recorded values lack, when a step's result becomes a class", () => {
    const error = refusal(
      invoice({ quoteResult: "Price", body: BODY.replace("await this.charge(price.cents)", "await this.charge(price.withTax())") }),
    );
    expect(error.changes.map((c) => [c.kind, c.step])).to.deep.equal([["type-changed", "quote"]]);
    expect(error.message)
      .to.contain("changed from { cents: number } to Price")
      .and.to.contain("members (withTax)")
      .and.to.contain("recorded shape { cents: number }");
  });

  it("calls arguments written another way possibly breaking, naming them, and other values breaking", () => {
    scenario.write(FILE, invoice({ body: BODY.replace("await this.charge(price.cents)", "await this.charge(Math.round(price.cents))") }));
    const maybe = scenario.generate({ check: true });
    expect(maybe.breaking).to.deep.equal([]);
    expect(maybe.possiblyBreaking.map((c) => [c.kind, c.step, c.condition])).to.deep.equal([
      [
        "arguments-changed",
        "charge",
        'the arguments (Math.round(result("quote").cents)) of step "charge" differ in value from those recorded (result("quote").cents)',
      ],
    ]);
    const other = refusal(
      invoice({
        body: BODY.replace("await this.charge(price.cents)", "await this.charge(price.cents, 2)"),
        chargeParam: "number, extra?: number",
      }),
    );
    expect(other.changes.map((c) => [c.kind, c.step])).to.deep.equal([["arguments-changed", "charge"]]);
    expect(other.message).to.contain(
      'step "charge" is now called with other arguments (result("quote").cents, 2) than runs recorded (result("quote").cents)',
    );
  });

  it("accepts a step's parameter type changed, since the journal records no argument types", () => {
    scenario.write(FILE, invoice({ chargeParam: "number | string" }));
    expect(scenario.generate().breaking).to.deep.equal([]);
    scenario.write(FILE, invoice({ chargeParam: "1 | 2" }));
    expect(scenario.generate().breaking).to.deep.equal([]);
  });

  it("reports a step appended after the last wait as reaching finished runs only, and records it", () => {
    scenario.write(FILE, invoice({ body: BODY.replace("return receipt;", "await this.audit();\n    return receipt;") }));
    const result = scenario.generate();
    expect(result.breaking.map((b) => [b.kind, b.step])).to.deep.equal([["after-last-wait", "audit"]]);
    expect(result.breaking[0]?.message).to.contain("no run in flight is affected").and.to.contain("finished runs no longer replay");
    expect(scenario.generate({ check: true }).ok).to.equal(true);
  });

  it("notes a recorded patch ID reused for another change", () => {
    const once = BODY.replace("const receipt", 'if (this.ctx.patched("audit")) await this.audit();\n    const receipt');
    scenario.write(FILE, invoice({ body: once, patches: ["audit"] }));
    scenario.generate();
    const twice = once.replace("return receipt;", 'if (this.ctx.patched("audit")) await this.audit();\n    return receipt;');
    scenario.write(FILE, invoice({ body: twice, patches: ["audit"] }));
    const result = scenario.generate({ acceptBreaking: true });
    expect(result.changes.join("\n"))
      .to.contain('patch ID "audit", recorded for one change, now also guards another')
      .and.to.contain("Declare a new ID");
  });

  it("compares a lock of version 1 by its steps, without reporting the calls it did not record", () => {
    const lock = JSON.parse(scenario.lock()) as { version: number; workflows: Record<string, { paths: Record<string, unknown[]> }> };
    lock.version = 1;
    const entry = lock.workflows.Invoice as { paths: Record<string, unknown[]> };
    entry.paths.run = ["quote", "charge"];
    scenario.fixture.write("fusee.lock.json", `${JSON.stringify(lock, null, 2)}\n`);
    const result = scenario.generate({ check: true });
    expect(result.breaking).to.deep.equal([]);
    expect(result.files.find((f) => f.kind === "lock")?.status).to.equal("stale");
  });
});
