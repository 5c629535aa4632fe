import { expect } from "chai";
import { Project, ts } from "ts-morph";
import { generate, SourceError } from "../src/index.js";
import { Fixture } from "./support/fixture.js";
import { MODELS, ODDITIES, PAY, PAYMENTS, SHAPES } from "./support/sources.js";

const GOOD_USE = `import type { Engine } from "@fusee/runtime";
import type { Receipt } from "./models.js";
import { PayClient, type PayRun } from "./fusee.generated.js";

export async function use(engine: Engine): Promise<[Receipt, number, string[], number, number, PayRun]> {
  const pay = new PayClient(engine);
  const run: PayRun = await pay.start("pay-1", 700, { idPolicy: { running: "fail" } });
  await run.signals.approve(true);
  await run.signals.go(1);
  const items: string[] = await run.queries.list();
  const count: number = await run.queries["count-by"]("high");
  const price: number = await run.updates.add("apple", { id: "u-1" });
  const started = await pay.updateWithStart("pay-2", 5, "add", "pear", { updateId: "u-2" });
  const again: number = started.result;
  const receipt: Receipt = await pay.run("pay-1").result();
  const signalled: PayRun = await pay.signalWithStart("pay-3", 9, "approve", true, { idPolicy: { finished: "refuse" } });
  return [receipt, price, items, count, again, signalled];
}
`;

const BAD_USE = `import type { Ctx, Engine } from "@fusee/runtime";
import { PayClient } from "./fusee.generated.js";

export async function misuse(engine: Engine, ctx: Ctx): Promise<void> {
  const pay = new PayClient(engine);
  const run = await pay.start("pay-1", "700");
  await run.signals.approve("yes");
  await run.updates.remove("apple");
  const wrong: string = await run.result();
  ctx.patched("early-notise");
  await pay.signalWithStart("pay-4", 1, "approve", "yes");
  void wrong;
}
`;

describe("emitClient", () => {
  describe("on the payment workflow", () => {
    let fixture: Fixture;
    let diagnostics: Map<string, { line: number; code: number; text: string }[]>;

    before(async function () {
      this.timeout(60_000);
      fixture = Fixture.create({ "src/models.ts": MODELS, "src/payments.ts": PAYMENTS, "src/pay.ts": PAY, "src/shapes.ts": SHAPES, "src/oddities.ts": ODDITIES });
      await generate({ project: fixture.dir });
      fixture.write("src/good-use.ts", GOOD_USE);
      fixture.write("src/bad-use.ts", BAD_USE);
      const project = new Project({ tsConfigFilePath: fixture.path("tsconfig.json") });
      const program = project.getProgram().compilerObject;
      diagnostics = new Map();
      for (const file of program.getSourceFiles()) {
        if (file.fileName.includes("/node_modules/") || program.isSourceFileFromExternalLibrary(file) || file.isDeclarationFile) continue;
        const found = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map((d) => ({
          line: file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1,
          code: d.code,
          text: ts.flattenDiagnosticMessageText(d.messageText, "\n"),
        }));
        diagnostics.set(file.fileName.slice(fixture.dir.length + 1), found);
      }
    });

    after(() => fixture.remove());

    it("type-checks the generated client without errors", () => {
      expect(diagnostics.get("src/fusee.generated.ts")).to.deep.equal([]);
    });

    it("type-checks the generated worker type table against the runtime's registerWorkflowTypes", () => {
      expect(fixture.read("src/fusee.workflows.generated.ts")).to.contain("registerWorkflowTypes(");
      expect(diagnostics.get("src/fusee.workflows.generated.ts")).to.deep.equal([]);
    });

    it("accepts the documented use: input, signal, query, update and result types all line up", () => {
      expect(diagnostics.get("src/good-use.ts")).to.deep.equal([]);
      expect(diagnostics.get("src/pay.ts")).to.deep.equal([]);
    });

    it("rejects a wrong input, a wrong signal argument, an unknown update, a wrong result type and a misspelled patch ID", () => {
      const found = (diagnostics.get("src/bad-use.ts") ?? []).map((d) => ({ line: d.line, code: d.code }));
      expect(found).to.deep.equal([
        { line: 6, code: 2345 },
        { line: 7, code: 2345 },
        { line: 8, code: 2339 },
        { line: 9, code: 2322 },
        { line: 10, code: 2345 },
        { line: 11, code: 2345 },
      ]);
      const patch = diagnostics.get("src/bad-use.ts")?.find((d) => d.line === 10);
      expect(patch?.text).to.contain('"early-notise"').and.to.contain('"early-notice"');
    });

    it("imports workflow-side declarations as types only, so the emitted JavaScript loads no workflow code", () => {
      const client = fixture.read("src/fusee.generated.ts");
      const imports = client.split("\n").filter((l) => l.startsWith("import"));
      expect(imports).to.deep.equal([
        'import type * as fusee from "@fusee/runtime";',
        'import type { DependencyContainer } from "tsyringe";',
        'import type { Priority, Receipt } from "./models.js";',
        'import type { Geo, default as Thing } from "./shapes.js";',
      ]);
      const emitted = ts.transpileModule(client, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
      expect(emitted).not.to.match(/\bimport\b|\brequire\(/);
    });

    it("names declarations from default exports, namespaces, packages and the global scope as the source does", () => {
      const client = fixture.read("src/fusee.generated.ts");
      for (const line of [
        "  container(): Promise<DependencyContainer | undefined>;",
        "  clock(): Promise<Clock | undefined>;",
        "  id(): Promise<`id-${number}`>;",
        '  record(): Promise<{ [key: string]: unknown; readonly "a-b": number; c?: string[] }>;',
        "  patch(updateOptions?: fusee.UpdateOptions): Promise<Partial<Thing>>;",
        "  async start(id: string, input: Thing, options?: fusee.StartOptions): Promise<OdditiesRun> {",
        "export class OdditiesRun extends FuseeRun<Geo.Point> {",
      ]) {
        expect(client).to.contain(line);
      }
      expect(fixture.read("src/fusee.workflows.generated.ts")).to.contain('import { default as Oddities } from "./oddities.js";');
    });

    it("heads the file as generated and declares the workflows' patch IDs", () => {
      const client = fixture.read("src/fusee.generated.ts");
      expect(client.split("\n")[0]).to.equal("// Generated by fusee gen. Do not edit.");
      expect(client).to.contain('declare module "@fusee/runtime" {\n  interface PatchIds {\n    "early-notice": true;\n  }\n}');
    });
  });

  describe("with a type the client cannot import", () => {
    let fixture: Fixture;

    before(() => {
      fixture = Fixture.create({
        "src/hidden.ts": `import { Workflow, Signal } from "@fusee/runtime";

interface Approval {
  by: string;
}

@Workflow()
export class Hidden {
  async run(): Promise<void> {}

  @Signal() approve(approval: Approval): void {
    void approval;
  }
}
`,
      });
    });

    after(() => fixture.remove());

    it("fails naming the type's file:line, the use and the fix, and writes nothing", async () => {
      let error: unknown;
      try {
        await generate({ project: fixture.dir });
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(SourceError);
      const problems = (error as SourceError).problems;
      expect(problems.map((p) => [p.code, `${p.at.file}:${p.at.line}`])).to.deep.equal([["FUSEE_GEN_UNREACHABLE_TYPE", "src/hidden.ts:3"]]);
      expect(problems[0]?.message).to.contain('signal "approve" of workflow Hidden (src/hidden.ts:11)').and.to.contain("Fix: export Approval from src/hidden.ts");
      expect((error as SourceError).message).to.match(/^src\/hidden\.ts:3: /);
      expect(fixture.exists("src/fusee.generated.ts")).to.equal(false);
      expect(fixture.exists("fusee.lock.json")).to.equal(false);
    });
  });
});
