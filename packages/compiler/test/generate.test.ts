import { rmSync, statSync } from "node:fs";
import { expect } from "chai";
import { GenConfigError, generate, type GenerateResult, SourceError } from "../src/index.js";
import { Fixture } from "./support/fixture.js";
import { MODELS, PAY, PAYMENTS } from "./support/sources.js";

const SHIPMENT = `import { Workflow, Step, Signal, Update, Query, Ctx } from "@fusee/runtime";
import { Money } from "./models.js";

export class Parcel {
  constructor(public id: string, public weight: number) {}
}

export enum Speed { Slow, Fast }

@Workflow({ name: "shipment", patches: ["v2"] })
export class Shipment {
  constructor(private readonly ctx: Ctx, private readonly label: string, private readonly speed: Speed) {}

  async run(parcel: Parcel): Promise<Parcel[]> {
    await this.weigh(parcel);
    if (parcel.weight > 10) {
      await this.heavy();
    } else {
      await this.light();
    }
    switch (this.speed) {
      case Speed.Slow:
        await this.heavy();
        break;
      case Speed.Fast:
        await this.light();
      default:
        await this.weigh(parcel);
    }
    const extra = parcel.id === "x" ? await this.light() : 0;
    for (const p of [parcel]) await this.ctx.step("scan", async () => p.id);
    await Promise.all([parcel].map(() => this.heavy()));
    try {
      await this.light();
    } catch {
      await this.heavy();
    }
    await this.finish();
    if (!this.ctx.patched("v2")) return [parcel];
    await this.weigh(parcel);
    return [parcel, new Parcel(String(extra), 0)];
  }

  private async finish(): Promise<void> {
    await this.ctx.step("finish", async () => new Date(0));
  }

  @Step() async weigh(parcel: Parcel): Promise<Money> { return new Money(parcel.weight, "kg"); }
  @Step() async heavy(): Promise<number> { return 1; }
  @Step() async light(): Promise<number> { return 2; }

  @Signal() relabel(parcel: Parcel): void { void parcel; }
  @Update() async reroute(to?: Parcel): Promise<Money | undefined> { return to === undefined ? undefined : new Money(1, "EUR"); }
  @Query() detail(key: [string, number?], filter: Record<string, Money[]>, since?: Date | null, ...rest: Speed[]): Map<string, Set<number>> {
    void key; void filter; void since; void rest;
    return new Map();
  }
}
`;

describe("generate", () => {
  describe("on a project", () => {
    let fixture: Fixture;
    let first: GenerateResult;

    before(async function () {
      this.timeout(60_000);
      fixture = Fixture.create({ "src/models.ts": MODELS, "src/payments.ts": PAYMENTS, "src/pay.ts": PAY, "src/shipment.ts": SHIPMENT });
      first = await generate({ project: fixture.dir });
    });

    after(() => fixture.remove());

    it("writes the client, the worker type table and the lock", () => {
      expect(first.files.map((f) => [f.kind, f.path.slice(fixture.dir.length + 1), f.status])).to.deep.equal([
        ["client", "src/fusee.generated.ts", "written"],
        ["workflows", "src/fusee.workflows.generated.ts", "written"],
        ["lock", "fusee.lock.json", "written"],
      ]);
      expect(first.workflows.map((w) => w.type)).to.deep.equal(["Pay", "shipment"]);
    });

    it("records the journaled calls of each path: steps with their arguments, timers and waits, branches with their conditions, switch arms, loops with their headers, try, helpers and patch guards", () => {
      const lock = JSON.parse(fixture.read("fusee.lock.json")) as { workflows: Record<string, { paths: Record<string, unknown> }> };
      const weigh = { step: "weigh", args: "parcel" };
      expect(lock.workflows.shipment?.paths).to.deep.equal({
        run: [
          weigh,
          { branch: [["heavy"], ["light"]], if: "10 < parcel.weight" },
          { branch: [["heavy"], ["light", weigh], [weigh]], switch: "this.speed", cases: ["Speed.Slow", "Speed.Fast", "default"] },
          { branch: [["light"], []], if: 'parcel.id === "x"' },
          { loop: ["scan"], over: "const p of [parcel]" },
          { loop: ["heavy"] },
          { try: ["light"], catch: ["heavy"], finally: [] },
          "finish",
          { patch: "v2", then: [weigh], else: [] },
        ],
        "signal:relabel": [],
        "update:reroute": [],
      });
      expect(lock.workflows.Pay?.paths).to.deep.equal({
        run: [
          { step: "quote", args: "cents" },
          { patch: "early-notice", then: [{ step: "notify", args: "Channel.Email" }], else: [] },
          { step: "charge-card", args: 'result("quote")' },
          { call: "wait-timer" },
          { wait: "condition", signals: ["approve"] },
        ],
        "signal:approve": [],
        "update:add": ["price"],
      });
    });

    it("records signatures with the types as written and their structure", () => {
      const lock = JSON.parse(fixture.read("fusee.lock.json")) as { workflows: Record<string, Record<string, unknown>> };
      const shipment = lock.workflows.shipment as { input: unknown; output: unknown; steps: Record<string, unknown>; patches: unknown };
      expect(shipment.input).to.deep.equal({ type: "Parcel", shape: "{ id: string; weight: number }" });
      expect(shipment.output).to.deep.equal({ type: "Parcel[]", shape: "{ id: string; weight: number }[]" });
      expect(shipment.patches).to.deep.equal(["v2"]);
      expect(shipment.steps.finish).to.deep.equal({ args: [], result: "Date" });
      expect(shipment.steps.weigh).to.deep.equal({
        args: [{ type: "Parcel", shape: "{ id: string; weight: number }" }],
        result: { type: "Money", shape: "{ cents: number; currency: string }" },
      });
    });

    it("records a dependency's named type by its name, not by its expansion", async function () {
      this.timeout(60_000);
      const timed = Fixture.create({
        "src/snooze.ts": `import { Workflow, Signal, Step, Ctx, type Duration, type FinishedStatus } from "@fusee/runtime";

export interface Pause { readonly for: Duration; readonly reason: string }

@Workflow()
export class Snooze {
  constructor(private readonly ctx: Ctx) {}
  async run(first: Duration): Promise<Duration[]> { await this.level(); await this.ctx.sleep(first); return [await this.pause({ for: first, reason: "x" })]; }
  @Step() async pause(p: Pause): Promise<Duration> { return p.for; }
  @Step() async level(): Promise<FinishedStatus> { return "ok"; }
  @Signal() extend(by: Duration | null): void { void by; }
}
`,
      });
      try {
        await generate({ project: timed.dir });
        const text = timed.read("fusee.lock.json");
        const snooze = (JSON.parse(text) as { workflows: Record<string, Record<string, unknown>> }).workflows.Snooze as {
          input: unknown;
          output: unknown;
          steps: Record<string, unknown>;
          signals: Record<string, unknown>;
        };
        expect(snooze.input).to.equal("Duration");
        expect(snooze.output).to.equal("Duration[]");
        // The project's own interface is still recorded by its structure, the dependency's type inside it by name.
        expect(snooze.steps.pause).to.deep.equal({
          args: [{ type: "Pause", shape: "{ for: Duration; reason: string }" }],
          result: "Duration",
        });
        expect(snooze.signals.extend).to.deep.equal({ args: ["Duration | null"], result: "void" });
        expect(text.length).to.be.below(2_000);

        // A lock written when such types were recorded expanded still judges the step by structure.
        const level = '"level": {\n          "args": [],\n          "result": "FinishedStatus"\n        }';
        expect(text).to.contain(level);
        const expanded = (shape: string): string => level.replace('"FinishedStatus"', JSON.stringify({ type: "FinishedStatus", shape }));
        timed.write("fusee.lock.json", text.replace(level, expanded('"cancelled" | "failed" | "ok" | "terminated"')));
        expect((await generate({ project: timed.dir, check: true })).breaking).to.deep.equal([]);
        timed.write("fusee.lock.json", text.replace(level, expanded("number")));
        const narrowed = await generate({ project: timed.dir, check: true });
        expect(narrowed.breaking.map((b) => [b.step, b.kind])).to.deep.equal([["level", "type-changed"]]);
      } finally {
        timed.remove();
      }
    });

    it("spells parameter and result types exactly in the client", () => {
      const client = fixture.read("src/fusee.generated.ts");
      expect(client).to.contain(
        "  detail(key: [string, number?], filter: Record<string, Money[]>, since?: Date | null, ...rest: Speed[]): Promise<Map<string, Set<number>>>;",
      );
      expect(client).to.contain("  reroute(to?: Parcel, updateOptions?: fusee.UpdateOptions): Promise<Money | undefined>;");
      expect(client).to.contain("  reroute: { arg: Parcel | undefined; result: Money | undefined };");
      expect(client).to.contain('  "count-by"(priority?: Priority): Promise<number>;');
      expect(client).to.contain(
        '  async start(id: string, input: Parcel, options?: fusee.StartOptions): Promise<ShipmentRun> {\n    return new ShipmentRun(await this.engine.start<Parcel[]>("shipment", id, input, options));',
      );
      expect(client).to.contain('import type { Parcel, Speed } from "./shipment.js";');
      expect(client).to.contain('import type { Money, Priority, Receipt } from "./models.js";');
    });

    it("emits the worker type table: constructor parameters and the classes values are rebuilt with", () => {
      const table = fixture.read("src/fusee.workflows.generated.ts");
      expect(table).to.equal(`// Generated by fusee gen. Do not edit.
// Types of the workflows for the worker: constructor parameters and the classes values are rebuilt with.

import { Ctx, registerWorkflowTypes } from "@fusee/runtime";
import { Money } from "./models.js";
import { Pay } from "./pay.js";
import { Payments } from "./payments.js";
import { Parcel, Shipment } from "./shipment.js";

registerWorkflowTypes(Pay, {
  constructorParams: [Ctx, Payments],
  steps: {
    "charge-card": { result: Money },
  },
  mailboxes: ["go"],
});

registerWorkflowTypes(Shipment, {
  constructorParams: [Ctx, String, Number],
  input: Parcel,
  output: Parcel,
  steps: {
    finish: { result: Date },
    weigh: { args: [Parcel], result: Money },
  },
  signals: {
    relabel: { args: [Parcel] },
  },
  updates: {
    reroute: { args: [Parcel], result: Money },
  },
  mailboxes: [],
});
`);
    });

    it("writes nothing when nothing changed, leaving files and their times alone", async () => {
      const before = first.files.map((f) => statSync(f.path).mtimeMs);
      const again = await generate({ project: fixture.dir });
      expect(again.files.map((f) => f.status)).to.deep.equal(["unchanged", "unchanged", "unchanged"]);
      expect(again.files.map((f) => statSync(f.path).mtimeMs)).to.deep.equal(before);
    });

    it("gives the same bytes from another project holding the same files, written in another order", async function () {
      this.timeout(30_000);
      const twin = Fixture.create({ "src/shipment.ts": SHIPMENT, "src/pay.ts": PAY, "src/payments.ts": PAYMENTS, "src/models.ts": MODELS });
      try {
        await generate({ project: twin.dir });
        for (const file of ["src/fusee.generated.ts", "src/fusee.workflows.generated.ts", "fusee.lock.json"]) {
          expect(twin.read(file), file).to.equal(fixture.read(file));
        }
      } finally {
        twin.remove();
      }
    });

    it("leaves every output unchanged after an edit that moves code but keeps the contract", async () => {
      fixture.write("src/pay.ts", `// A comment that moves every line down.\n\n${PAY}`);
      const result = await generate({ project: fixture.dir, check: true });
      expect(result.ok).to.equal(true);
      expect(result.files.map((f) => f.status)).to.deep.equal(["current", "current", "current"]);
      fixture.write("src/pay.ts", PAY);
    });

    it("reports stale files with check, and writes nothing", async () => {
      const client = fixture.read("src/fusee.generated.ts");
      fixture.write(
        "src/pay.ts",
        PAY.replace(
          "@Query() list(): string[] {",
          "@Query() first(): string | undefined {\n    return this.items[0];\n  }\n\n  @Query() list(): string[] {",
        ),
      );
      try {
        const result = await generate({ project: fixture.dir, check: true });
        expect(result.ok).to.equal(false);
        expect(result.breaking).to.deep.equal([]);
        expect(result.files.map((f) => [f.kind, f.status])).to.deep.equal([
          ["client", "stale"],
          ["workflows", "current"],
          ["lock", "stale"],
        ]);
        expect(result.changes).to.deep.equal(['Pay: query "first" added']);
        expect(fixture.read("src/fusee.generated.ts")).to.equal(client);
      } finally {
        fixture.write("src/pay.ts", PAY);
      }
    });
  });

  describe("services and mailboxes in the worker type table", () => {
    let fixture: Fixture;

    before(() => {
      fixture = Fixture.create({
        "src/tills.ts": `export class Ledger {\n  lines: string[] = [];\n}\n\nclass Drawer {\n  constructor(readonly ledger: Ledger) {}\n}\n\nexport class Tills {\n  constructor(readonly ledger: Ledger, readonly size: number, readonly drawer: Drawer) {}\n}\n\nexport class Cashier {\n  constructor(private readonly tills: Tills, private readonly audit?: Ledger) {}\n}\n`,
        "src/shop.ts": `import { Workflow, Ctx } from "@fusee/runtime";\nimport { Cashier } from "./tills.js";\n\n@Workflow()\nexport class Shop {\n  constructor(private readonly ctx: Ctx, private readonly cashier: Cashier) {}\n\n  async run(mailbox: string): Promise<string | undefined> {\n    return this.ctx.waitFor<string>(mailbox);\n  }\n}\n`,
      });
    });

    after(() => fixture.remove());

    it("registers the constructor types of every service a workflow needs, directly or not, and no mailboxes when a name is not literal", async () => {
      await generate({ project: fixture.dir });
      expect(fixture.read("src/fusee.workflows.generated.ts")).to.equal(`// Generated by fusee gen. Do not edit.
// Types of the workflows for the worker: constructor parameters and the classes values are rebuilt with.

import { Ctx, registerConstructorTypes, registerWorkflowTypes } from "@fusee/runtime";
import { Shop } from "./shop.js";
import { Cashier, Ledger, Tills } from "./tills.js";

registerWorkflowTypes(Shop, {
  constructorParams: [Ctx, Cashier],
});

// Services the workflows' constructors need, directly or through other services.
registerConstructorTypes(Cashier, [Tills, Ledger]);
`);
    });
  });

  describe("configuration", () => {
    let fixture: Fixture;

    before(() => {
      fixture = Fixture.create({ "src/models.ts": MODELS, "src/payments.ts": PAYMENTS, "src/pay.ts": PAY });
    });

    after(() => fixture.remove());

    it("writes where fusee.config.json says, importing relative to that place", async () => {
      fixture.write("fusee.config.json", `${JSON.stringify({ out: "generated/client.ts", lock: "locks/fusee.lock.json" })}\n`);
      const result = await generate({ project: fixture.path("tsconfig.json") });
      expect(result.files.map((f) => f.path.slice(fixture.dir.length + 1))).to.deep.equal([
        "generated/client.ts",
        "generated/fusee.workflows.generated.ts",
        "locks/fusee.lock.json",
      ]);
      expect(fixture.read("generated/client.ts")).to.contain('import type { Priority, Receipt } from "../src/models.js";');
    });

    it("lets the out option override the configuration", async () => {
      const result = await generate({ project: fixture.dir, out: "src/api.generated.ts", check: true });
      expect(result.files.map((f) => f.path.slice(fixture.dir.length + 1))).to.deep.equal([
        "src/api.generated.ts",
        "src/api.workflows.generated.ts",
        "locks/fusee.lock.json",
      ]);
    });

    describe("the sources workflows are read from", () => {
      const TEST_ONLY = `import { Workflow } from "@fusee/runtime";\n\n@Workflow()\nexport class Probe {\n  async run(): Promise<void> {}\n}\n`;
      let sources: Fixture;

      beforeEach(() => {
        sources = Fixture.create({
          "src/models.ts": MODELS,
          "src/payments.ts": PAYMENTS,
          "src/pay.ts": PAY,
          "src/pay.test.ts": TEST_ONLY.replace(/Probe/g, "PayProbe"),
          "test/probe.ts": TEST_ONLY,
        });
        sources.replace("tsconfig.json", '"include": [\n    "src"\n  ]', '"include": [\n    "src",\n    "test"\n  ]');
      });

      afterEach(() => sources.remove());

      it("leaves out workflows declared in test files and test folders by default", async () => {
        const result = await generate({ project: sources.dir });
        expect(result.workflows.map((w) => w.type)).to.deep.equal(["Pay"]);
        expect(sources.read("src/fusee.generated.ts")).not.to.contain("Probe");
      });

      it("reads what include and exclude of fusee.config.json select, among the files tsconfig.json includes", async () => {
        sources.write("fusee.config.json", `${JSON.stringify({ include: ["src/**/*", "test/**/*"], exclude: ["src/pay.ts"] })}\n`);
        const result = await generate({ project: sources.dir });
        expect(result.workflows.map((w) => w.type)).to.deep.equal(["PayProbe", "Probe"]);
      });

      it("refuses include or exclude that is not a list of patterns", async () => {
        sources.write("fusee.config.json", `${JSON.stringify({ exclude: "test" })}\n`);
        const error = await generate({ project: sources.dir }).catch((e: unknown) => e);
        expect(error).to.be.instanceOf(GenConfigError);
        expect((error as GenConfigError).message).to.contain('"exclude" must be an array of file patterns');
      });
    });

    it("refuses an unknown key in fusee.config.json, naming it", async () => {
      fixture.write("fusee.config.json", `${JSON.stringify({ output: "x.ts" })}\n`);
      const error = await generate({ project: fixture.dir }).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(GenConfigError);
      expect((error as GenConfigError).code).to.equal("FUSEE_GEN_CONFIG");
      expect((error as GenConfigError).message).to.contain('unknown key "output"');
    });

    it("refuses a project that imports the runtime without having it installed", async () => {
      const bare = Fixture.create({ "src/pay.ts": PAY });
      try {
        rmSync(bare.path("node_modules/@fusee"), { recursive: true });
        const error = await generate({ project: bare.dir }).catch((e: unknown) => e);
        expect(error).to.be.instanceOf(GenConfigError);
        expect((error as GenConfigError).message)
          .to.contain("imports @fusee/runtime, which cannot be resolved")
          .and.to.contain("npm install @fusee/runtime");
      } finally {
        bare.remove();
      }
    });

    it("refuses a folder without tsconfig.json, saying what to pass", async () => {
      const error = await generate({ project: fixture.path("src") }).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(GenConfigError);
      expect((error as GenConfigError).message)
        .to.contain("No tsconfig.json")
        .and.to.contain("--project");
    });
  });

  describe("a project without workflows", () => {
    it("writes files with nothing to import, so strict settings such as noUnusedLocals hold", async () => {
      const fixture = Fixture.create({ "src/index.ts": "export const answer = 42;\n" });
      try {
        const result = await generate({ project: fixture.dir });
        expect(result.workflows).to.deep.equal([]);
        expect(fixture.read("src/fusee.generated.ts")).to.equal(
          "// Generated by fusee gen. Do not edit.\n// Typed clients of this project's workflows; run `npx fusee gen` after changing them.\n\nexport {};\n",
        );
        expect(fixture.read("src/fusee.workflows.generated.ts")).to.match(
          /^\/\/ Generated by fusee gen\. Do not edit\.\n.*\n\nexport \{\};\n$/,
        );
        expect(JSON.parse(fixture.read("fusee.lock.json"))).to.deep.equal({ version: 2, workflows: {} });
      } finally {
        fixture.remove();
      }
    });
  });

  describe("workflow source it cannot use", () => {
    it("takes any patch ID in a workflow that declares none, as the runtime does", async () => {
      const fixture = Fixture.create({
        "src/open.ts": `import { Workflow, Ctx } from "@fusee/runtime";

@Workflow("open")
export class Open {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<void> {
    if (this.ctx.patched("later")) return;
  }
}
`,
      });
      try {
        const result = await generate({ project: fixture.dir });
        expect(result.workflows.map((w) => w.type)).to.deep.equal(["open"]);
      } finally {
        fixture.remove();
      }
    });

    it("lists every problem with its code, file:line and fix, and writes nothing", async () => {
      const fixture = Fixture.create({
        "src/broken.ts": `import { Workflow, Signal, Ctx } from "@fusee/runtime";

@Workflow({ patches: ["v2"] })
export class NoRun {
  async start(): Promise<void> {}
}

@Workflow({ name: "twice", patches: ["v2"] })
export class First {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<void> {
    if (this.ctx.patched("v3")) return;
  }
  @Signal() pair(a: string, b: string): void { void a; void b; }
}

@Workflow("twice")
export class Second {
  async run(): Promise<void> {}
}
`,
      });
      try {
        const error = await generate({ project: fixture.dir }).catch((e: unknown) => e);
        expect(error).to.be.instanceOf(SourceError);
        expect((error as SourceError).problems.map((p) => [p.code, `${p.at.file}:${p.at.line}`])).to.deep.equal([
          ["FUSEE_GEN_INVALID_WORKFLOW", "src/broken.ts:3"],
          ["FUSEE_GEN_UNDECLARED_PATCH", "src/broken.ts:12"],
          ["FUSEE_GEN_INVALID_WORKFLOW", "src/broken.ts:14"],
          ["FUSEE_GEN_DUPLICATE_NAME", "src/broken.ts:17"],
        ]);
        const messages = (error as SourceError).problems.map((p) => p.message);
        expect(messages[0]).to.contain("has no run() method");
        expect(messages[1]).to.contain('Patch ID "v3" is not declared').and.to.contain('@Workflow({ patches: ["v3"] })');
        expect(messages[2]).to.contain("a signal carries one value");
        expect(messages[3]).to.contain('"twice" is also used by class First');
        expect(fixture.exists("src/fusee.generated.ts")).to.equal(false);
      } finally {
        fixture.remove();
      }
    });
  });
});
