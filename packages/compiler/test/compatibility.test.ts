import { expect } from "chai";
import { BreakingChangeError, type BreakingChange, type GenerateResult } from "../src/index.js";
import { Scenario } from "./support/scenario.js";

interface OrderSource {
  patches?: string[];
  body?: string;
  chargeResult?: string;
  addBody?: string;
}

const BASE_BODY = `
    const count = await this.reserve(id);
    const receipt = await this.charge(count);
    await this.ship(receipt);
    return receipt;`;

/**
 * The order workflow: `async run` is on line 8, so a body starts on line 9; `charge` is on line 16 after the base body.
 * The run ends with a durable timer (put on the line of its last `return`), so that every step before it
 * is one a run in flight may have recorded.
 */
function order({ patches = [], body = BASE_BODY, chargeResult = "string", addBody = "return item.length;" }: OrderSource = {}): string {
  body = body.replace(/return ([^;]*);\s*$/, 'await this.ctx.sleep("1d"); return $1;');
  return `import { Workflow, Step, Update, Ctx } from "@fusee/runtime";

@Workflow({ patches: [${patches.map((p) => JSON.stringify(p)).join(", ")}] })
export class Order {
  private extra = 0;
  constructor(private readonly ctx: Ctx) {}

  async run(id: string): Promise<string> {${body}
  }

  @Step() async reserve(id: string): Promise<number> { return id.length + this.extra; }
  @Step() async charge(count: number): Promise<${chargeResult}> { return undefined as never as ${chargeResult}; }
  @Step({ name: "charge-v2" }) async chargeCents(count: number): Promise<number> { return count; }
  @Step() async ship(receipt: string): Promise<void> { void receipt; }
  @Step() async audit(): Promise<void> {}
  @Step() async bill(count: number): Promise<string> { return String(count); }

  @Update() async add(item: string): Promise<number> {
    ${addBody}
  }
}
`;
}

const FILE = "src/order.ts";

function breaking(error: unknown): Pick<BreakingChange, "kind" | "step" | "workflow">[] {
  expect(error).to.be.instanceOf(BreakingChangeError);
  return (error as BreakingChangeError).changes.map(({ kind, step, workflow }) => ({ kind, step, workflow }));
}

describe("checkCompatibility", () => {
  let scenario: Scenario;

  before(function () {
    this.timeout(60_000);
    scenario = Scenario.create({ [FILE]: order() });
  });

  afterEach(() => scenario.reset());
  after(() => scenario.remove());

  /** Asserts that gen refuses the change and writes nothing, and that --check reports it too. */
  function expectRefused(source: string, expected: Pick<BreakingChange, "kind" | "step">, line: number): BreakingChangeError {
    const lock = scenario.lock();
    const client = scenario.fixture.read("src/fusee.generated.ts");
    scenario.write(FILE, source);
    const error = scenario.failure();
    expect(breaking(error)).to.deep.equal([{ ...expected, workflow: "Order" }]);
    const change = (error as BreakingChangeError).changes[0];
    expect(change?.at).to.deep.equal({ file: FILE, line });
    expect(change?.message)
      .to.contain("Workflow Order")
      .and.to.contain(`"${expected.step}"`)
      .and.to.contain(`${FILE}:${line}`)
      .and.to.contain("ctx.patched(")
      .and.to.contain("--accept-breaking");
    expect(scenario.lock()).to.equal(lock);
    expect(scenario.fixture.read("src/fusee.generated.ts")).to.equal(client);

    const check = scenario.generate({ check: true });
    expect(check.ok).to.equal(false);
    expect(check.breaking.map((b) => b.kind)).to.deep.equal([expected.kind]);
    expect(check.files.find((f) => f.kind === "lock")?.status).to.equal("stale");
    return error as BreakingChangeError;
  }

  /** Asserts that gen records the change and that --check then passes. */
  function expectRecorded(source: string): GenerateResult {
    scenario.write(FILE, source);
    const result = scenario.generate();
    expect(result.breaking).to.deep.equal([]);
    expect(result.files.find((f) => f.kind === "lock")?.status).to.equal("written");
    const check = scenario.generate({ check: true });
    expect(check.ok, JSON.stringify(check.breaking)).to.equal(true);
    return result;
  }

  describe("a step inserted into an existing path", () => {
    it("is refused, naming the workflow, the step, file:line and the fix", () => {
      const body = `
    const count = await this.reserve(id);
    await this.audit();
    const receipt = await this.charge(count);
    await this.ship(receipt);
    return receipt;`;
      const error = expectRefused(order({ body }), { kind: "inserted", step: "audit" }, 10);
      expect(error.changes[0]?.message).to.contain('if (this.ctx.patched("add-audit"))');
    });

    it("is recorded once guarded by ctx.patched() with a declared patch ID", () => {
      const body = `
    const count = await this.reserve(id);
    if (this.ctx.patched("audit")) await this.audit();
    const receipt = await this.charge(count);
    await this.ship(receipt);
    return receipt;`;
      const result = expectRecorded(order({ patches: ["audit"], body }));
      expect(result.changes).to.include('Order: patch "audit" declared');
      const lock = JSON.parse(scenario.lock()) as { workflows: { Order: { paths: { run: unknown[] } } } };
      // A step's result is recorded as such in the arguments of the calls it feeds.
      expect(lock.workflows.Order.paths.run).to.deep.equal([
        { step: "reserve", args: "id" },
        { patch: "audit", then: ["audit"], else: [] },
        { step: "charge", args: 'result("reserve")' },
        { step: "ship", args: 'result("charge")' },
        { call: "timer" },
      ]);
    });

    it("is refused for a message to another workflow, which is journaled as a step", () => {
      const body = `
    const count = await this.reserve(id);
    await this.ctx.signalWorkflow("ledger", "reserved", count);
    const receipt = await this.charge(count);
    await this.ship(receipt);
    return receipt;`;
      expectRefused(order({ body }), { kind: "inserted", step: "ctx.signalWorkflow" }, 10);
    });

    it("is possibly breaking inside a new branch, naming the condition runs recorded before it must meet to break", () => {
      const body = `
    const count = await this.reserve(id);
    if (id.startsWith("vip")) await this.audit();
    const receipt = await this.charge(count);
    await this.ship(receipt);
    return receipt;`;
      scenario.write(FILE, order({ body }));
      const check = scenario.generate({ check: true });
      expect(check.ok).to.equal(false);
      expect(check.breaking).to.deep.equal([]);
      expect(check.possiblyBreaking.map(({ kind, step, at }) => ({ kind, step, at }))).to.deep.equal([
        { kind: "inserted", step: "audit", at: { file: FILE, line: 10 } },
      ]);
      expect(check.possiblyBreaking[0]?.condition).to.equal('`id.startsWith("vip")` holds');
      expect(check.possiblyBreaking[0]?.message).to.contain('Runs in flight on a path where `id.startsWith("vip")` holds could not replay');
      // Gen writes it, saying so: it is for the runs in flight to decide.
      expect(scenario.generate().possiblyBreaking).to.have.length(1);
      expect(scenario.generate({ check: true }).ok).to.equal(true);
    });

    it("is refused at the end of the path too, where recorded runs that finished would replay into it", () => {
      const body = `
    const count = await this.reserve(id);
    const receipt = await this.charge(count);
    await this.ship(receipt);
    await this.audit();
    return receipt;`;
      expectRefused(order({ body }), { kind: "inserted", step: "audit" }, 12);
    });

    it("is refused inside an update handler", () => {
      const addBody = `await this.audit();
    return item.length;`;
      expectRefused(order({ addBody }), { kind: "inserted", step: "audit" }, 23);
    });
  });

  describe("a step removed from an existing path", () => {
    it("is refused", () => {
      const body = `
    const count = await this.reserve(id);
    await this.ship(String(count));
    return String(count);`;
      expectRefused(order({ body }), { kind: "removed", step: "charge" }, 10);
    });

    it("is recorded when the old step stays in the else branch of a patch", () => {
      const body = `
    const count = await this.reserve(id);
    const receipt = this.ctx.patched("free") ? "free" : await this.charge(count);
    await this.ship(receipt);
    return receipt;`;
      expectRecorded(order({ patches: ["free"], body }));
    });
  });

  describe("a step renamed", () => {
    it("is refused, naming the old and the new name", () => {
      const body = `
    const count = await this.reserve(id);
    const receipt = await this.bill(count);
    await this.ship(receipt);
    return receipt;`;
      const error = expectRefused(order({ body }), { kind: "renamed", step: "charge" }, 10);
      expect(error.changes[0]?.message).to.contain('step "charge" was renamed to "bill"');
    });

    it("is recorded when guarded", () => {
      const body = `
    const count = await this.reserve(id);
    let receipt: string;
    if (this.ctx.patched("bill")) {
      receipt = await this.bill(count);
    } else {
      receipt = await this.charge(count);
    }
    await this.ship(receipt);
    return receipt;`;
      expectRecorded(order({ patches: ["bill"], body }));
    });
  });

  describe("steps reordered", () => {
    const reordered = `
    const count = await this.reserve(id);
    await this.ship("early");
    const receipt = await this.charge(count);
    return receipt;`;

    it("is refused", () => {
      expectRefused(order({ body: reordered }), { kind: "reordered", step: "charge" }, 11);
    });

    it("is recorded when guarded", () => {
      const body = `
    const count = await this.reserve(id);
    if (!this.ctx.patched("ship-first")) {
      const receipt = await this.charge(count);
      await this.ship(receipt);
      await this.ctx.sleep("1d");
      return receipt;
    }
    await this.ship("early");
    return this.charge(count);`;
      expectRecorded(order({ patches: ["ship-first"], body }));
    });
  });

  describe("a step's result type changed", () => {
    it("is refused when recorded values no longer fit", () => {
      const error = expectRefused(order({ chargeResult: "number" }), { kind: "type-changed", step: "charge" }, 16);
      expect(error.changes[0]?.message)
        .to.contain("changed from string to number")
        .and.to.contain("recorded shape string, new shape number");
    });

    it("is recorded when widened, since recorded values still fit", () => {
      const result = expectRecorded(order({ chargeResult: "string | number" }));
      expect(result.changes).to.include('Order: step "charge" changed its signature');
    });

    it("is recorded when the new type comes with a new step under a patch", () => {
      const body = `
    const count = await this.reserve(id);
    const receipt = this.ctx.patched("cents") ? String(await this.chargeCents(count)) : await this.charge(count);
    await this.ship(receipt);
    return receipt;`;
      expectRecorded(order({ patches: ["cents"], body }));
    });
  });

  describe("patches", () => {
    const guarded = `
    const count = await this.reserve(id);
    if (this.ctx.patched("audit")) await this.audit();
    const receipt = await this.charge(count);
    await this.ship(receipt);
    return receipt;`;
    const unguarded = `
    const count = await this.reserve(id);
    await this.audit();
    const receipt = await this.charge(count);
    await this.ship(receipt);
    return receipt;`;

    it("refuses to drop a recorded guard, since runs that did not take the patch could not replay", () => {
      expectRecorded(order({ patches: ["audit"], body: guarded }));
      scenario.write(FILE, order({ patches: ["audit"], body: unguarded }));
      const error = scenario.failure();
      expect(breaking(error)).to.deep.equal([{ kind: "removed", step: "audit", workflow: "Order" }]);
      expect((error as BreakingChangeError).message)
        .to.contain('ctx.patched("audit")')
        .and.to.contain('ctx.deprecatePatch("audit")');
    });

    it("accepts the guard replaced by ctx.deprecatePatch()", () => {
      expectRecorded(order({ patches: ["audit"], body: guarded }));
      const deprecated = unguarded.replace("await this.audit();", 'this.ctx.deprecatePatch("audit");\n    await this.audit();');
      expectRecorded(order({ patches: ["audit"], body: deprecated }));
    });

    it("checks the patched arm of a recorded patch like any other path", () => {
      expectRecorded(order({ patches: ["audit"], body: guarded }));
      const grown = guarded.replace("await this.audit();", "{ await this.audit(); await this.bill(1); }");
      scenario.write(FILE, order({ patches: ["audit"], body: grown }));
      expect(breaking(scenario.failure())).to.deep.equal([{ kind: "inserted", step: "bill", workflow: "Order" }]);
    });
  });

  describe("loops", () => {
    it("refuses a step inserted into a recorded loop that runs a known number of times", () => {
      const loop = `
    const count = await this.reserve(id);
    for (let i = 0; i < 3; i++) await this.charge(i);
    return "done";`;
      scenario.write(FILE, order({ body: loop }));
      scenario.generate({ acceptBreaking: true });
      scenario.write(FILE, order({ body: loop.replace("await this.charge(i);", "{ await this.charge(i); await this.audit(); }") }));
      expect(breaking(scenario.failure())).to.deep.equal([{ kind: "inserted", step: "audit", workflow: "Order" }]);
    });

    it("calls a step inserted into a loop whose runs depend on data possibly breaking, for runs whose loop ran", () => {
      const loop = `
    const count = await this.reserve(id);
    for (let i = 0; i < count; i++) await this.charge(i);
    return "done";`;
      scenario.write(FILE, order({ body: loop }));
      scenario.generate({ acceptBreaking: true });
      scenario.write(FILE, order({ body: loop.replace("await this.charge(i);", "{ await this.charge(i); await this.audit(); }") }));
      const check = scenario.generate({ check: true });
      expect(check.breaking).to.deep.equal([]);
      expect(check.possiblyBreaking.map((b) => [b.kind, b.step, b.condition])).to.deep.equal([
        ["inserted", "audit", "the loop `let i = 0; i < count; i++` runs 1 time"],
      ]);
    });
  });

  describe("what is compatible", () => {
    it("records a new workflow and a new signal", () => {
      scenario.write(
        "src/ship.ts",
        `import { Workflow, Signal } from "@fusee/runtime";\n\n@Workflow()\nexport class Shipping {\n  async run(): Promise<void> {}\n  @Signal() arrived(at: number): void { void at; }\n}\n`,
      );
      const result = scenario.generate();
      expect(result.changes).to.deep.equal(["workflow Shipping added"]);
      scenario.write(
        "src/ship.ts",
        `import { Workflow, Signal } from "@fusee/runtime";\n\n@Workflow()\nexport class Shipping {\n  async run(): Promise<void> {}\n  @Signal() arrived(at: number): void { void at; }\n  @Signal() lost(): void {}\n}\n`,
      );
      expect(scenario.generate().changes).to.deep.equal(['Shipping: signal "lost" added']);
      scenario.write("src/ship.ts", "export {};\n");
    });

    it("records a breaking change with acceptBreaking, and lists it", () => {
      const body = `
    const count = await this.reserve(id);
    return String(count);`;
      scenario.write(FILE, order({ body }));
      const result = scenario.generate({ acceptBreaking: true });
      // The first difference a replay meets is the change reported.
      expect(result.breaking.map((b) => [b.kind, b.step])).to.deep.equal([["removed", "charge"]]);
      expect(result.breaking[0]?.message).to.contain('step "charge" was removed');
      expect(scenario.generate({ check: true }).ok).to.equal(true);
    });

    it("refuses a workflow removed while the lock records it", () => {
      scenario.write(FILE, "export {};\n");
      expect(breaking(scenario.failure())).to.deep.equal([{ kind: "workflow-removed", step: "Order", workflow: "Order" }]);
    });
  });
});
