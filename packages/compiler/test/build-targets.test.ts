import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect } from "chai";
import { build } from "esbuild";
import { type Diagnostic, Project, ts } from "ts-morph";
import { generate } from "../src/index.js";
import { FIXTURE_COMPILER_OPTIONS, Fixture } from "./support/fixture.js";

const run = promisify(execFile);

const explain = (d: Diagnostic): string =>
  `${d.getSourceFile()?.getFilePath() ?? ""}: ${ts.flattenDiagnosticMessageText(d.compilerObject.messageText, "\n")}`;

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

// Every module that matters records its loading, so a script can tell which ones a given import pulled in.
const MAILER_JS = `(globalThis.fuseeLoaded ??= []).push("mailer-sdk");

export class Mailer {
  send(name) {
    return "hello " + name;
  }
}
`;

const GREET = `import { Workflow, Step, Ctx } from "@fusee/runtime";
import { Mailer } from "mailer-sdk";
import type { Greeting } from "./models.js";

((globalThis as { fuseeLoaded?: string[] }).fuseeLoaded ??= []).push("greet");

@Workflow()
export class Greet {
  constructor(
    private readonly ctx: Ctx,
    private readonly mailer: Mailer,
  ) {}

  async run(name: string): Promise<Greeting> {
    const text = await this.send(name);
    return { text, workflowId: this.ctx.workflowId, ctx: this.ctx instanceof Ctx, mailer: this.mailer instanceof Mailer };
  }

  @Step() async send(name: string): Promise<string> {
    return this.mailer.send(name);
  }
}
`;

const workerEntry = (withTable: boolean): string => `import "reflect-metadata";
import { Config, Engine } from "@fusee/runtime";
import { Greet } from "./greet.js";
${withTable ? 'import "./fusee.workflows.generated.js";\n' : ""}
export function openWorker(): Promise<Engine> {
  return Engine.open(Config.memory(), { workflows: [Greet] });
}
`;

const CLIENT = `import type { Engine } from "@fusee/runtime";
import { GreetClient } from "../worker/src/fusee.generated.js";

export async function greet(engine: Engine, name: string): Promise<{ text: string; workflowId: string }> {
  const run = await new GreetClient(engine).start(\`greet-\${name}\`, name);
  const greeting = await run.result();
  const text: string = greeting.text;
  return { ...greeting, text };
}
`;

// Loads the client first and records what that loaded, then opens the worker's engine and hands it to the client.
const CLIENT_HOST = `const client = await import(process.argv[2]);
const afterClient = [...(globalThis.fuseeLoaded ?? [])];
const { openWorker } = await import(process.argv[3]);
const engine = await openWorker();
try {
  const greeting = await client.greet(engine, "ada");
  console.log(JSON.stringify({ afterClient, afterWorker: globalThis.fuseeLoaded ?? [], greeting }));
} finally {
  await engine.shutdown();
}
`;

// Runs one workflow on a bundled worker and prints its result or its error.
const BUNDLE_HOST = `const { openWorker } = await import(process.argv[2]);
const engine = await openWorker();
try {
  const handle = await engine.start("Greet", "greet-1", "ada");
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error("no result within 10 s")), 10_000).unref());
  console.log(JSON.stringify({ result: await Promise.race([handle.result(), timeout]) }));
} catch (e) {
  console.log(JSON.stringify({ error: String(e?.message ?? e) }));
} finally {
  await engine.shutdown();
}
`;

describe("build targets", function () {
  this.timeout(60_000);
  let fixture: Fixture;

  before(async () => {
    // A worker package whose workflow depends on mailer-sdk, installed only in the worker's node_modules,
    // and a client package beside it that sees the workspace's runtime but not mailer-sdk.
    fixture = Fixture.create({
      "worker/package.json": json({ name: "worker", private: true, type: "module" }),
      "worker/tsconfig.json": json({ compilerOptions: FIXTURE_COMPILER_OPTIONS, include: ["src"] }),
      "worker/node_modules/mailer-sdk/package.json": json({
        name: "mailer-sdk",
        version: "1.0.0",
        type: "module",
        main: "index.js",
        types: "index.d.ts",
      }),
      "worker/node_modules/mailer-sdk/index.js": MAILER_JS,
      "worker/node_modules/mailer-sdk/index.d.ts": "export declare class Mailer {\n  send(name: string): string;\n}\n",
      "worker/src/models.ts":
        "export interface Greeting {\n  text: string;\n  workflowId: string;\n  ctx: boolean;\n  mailer: boolean;\n}\n",
      "worker/src/greet.ts": GREET,
      "worker/src/main.ts": workerEntry(true),
      "worker/src/bare.ts": workerEntry(false),
      "client/package.json": json({ name: "client", private: true, type: "module" }),
      "client/tsconfig.json": json({ compilerOptions: { ...FIXTURE_COMPILER_OPTIONS, rootDir: ".." }, include: ["main.ts"] }),
      "client/main.ts": CLIENT,
      "client-host.mjs": CLIENT_HOST,
      "bundle-host.mjs": BUNDLE_HOST,
    });
    await generate({ project: fixture.path("worker") });
  });

  after(() => fixture.remove());

  it("a client-only package compiles and runs against an engine without the workflow's dependencies", async () => {
    const client = new Project({
      tsConfigFilePath: fixture.path("client/tsconfig.json"),
      compilerOptions: { noEmit: false, outDir: fixture.path("build/client") },
    });
    const options = client.getCompilerOptions();
    const unresolved = ts.resolveModuleName("mailer-sdk", fixture.path("client/main.ts"), options, ts.sys).resolvedModule;
    expect(unresolved, "mailer-sdk must not resolve from the client").to.equal(undefined);

    expect(client.getPreEmitDiagnostics().map(explain)).to.deep.equal([]);
    const program = client.getProgram().compilerObject;
    const own = program
      .getSourceFiles()
      .map((f) => f.fileName)
      .filter((f) => f.startsWith(`${fixture.dir}/`) && !f.includes("/node_modules/"))
      .map((f) => f.slice(fixture.dir.length + 1))
      .sort();
    expect(own).to.deep.equal(["client/main.ts", "worker/src/fusee.generated.ts", "worker/src/models.ts"]);
    expect(client.emitSync().getEmitSkipped()).to.equal(false);

    const worker = new Project({
      tsConfigFilePath: fixture.path("worker/tsconfig.json"),
      compilerOptions: { noEmit: false, rootDir: fixture.path("worker/src"), outDir: fixture.path("worker/dist") },
    });
    expect(worker.getPreEmitDiagnostics().map(explain)).to.deep.equal([]);
    expect(worker.emitSync().getEmitSkipped()).to.equal(false);

    const { stdout } = await run(
      process.execPath,
      [fixture.path("client-host.mjs"), fixture.path("build/client/client/main.js"), fixture.path("worker/dist/main.js")],
      {
        cwd: fixture.dir,
        timeout: 30_000,
      },
    );
    const out = JSON.parse(stdout) as { afterClient: string[]; afterWorker: string[]; greeting: unknown };
    expect(out.afterClient).to.deep.equal([]);
    expect(out.afterWorker).to.deep.equal(["mailer-sdk", "greet"]);
    expect(out.greeting).to.deep.equal({ text: "hello ada", workflowId: "greet-ada", ctx: true, mailer: true });
  });

  it("an esbuild-built project gets constructor injection from the generated type table", async () => {
    const outdir = fixture.path("worker/bundle");
    const result = await build({
      entryPoints: { typed: fixture.path("worker/src/main.ts"), bare: fixture.path("worker/src/bare.ts") },
      absWorkingDir: fixture.path("worker"),
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      outdir,
      external: ["@fusee/runtime", "tsyringe", "reflect-metadata"],
      logLevel: "silent",
    });
    expect(result.errors).to.deep.equal([]);
    const typed = fixture.read("worker/bundle/typed.js");
    // esbuild emits no decorator metadata: whatever tsyringe learns of the constructor comes from the table.
    expect(typed).not.to.contain("design:paramtypes");
    expect(typed).to.contain("registerWorkflowTypes(");
    expect(fixture.read("worker/bundle/bare.js")).not.to.contain("registerWorkflowTypes(");

    const [withTable, withoutTable] = await Promise.all(
      ["typed.js", "bare.js"].map(async (file) => {
        const { stdout } = await run(process.execPath, [fixture.path("bundle-host.mjs"), `${outdir}/${file}`], {
          cwd: fixture.dir,
          timeout: 30_000,
        });
        return JSON.parse(stdout) as { result?: unknown; error?: string };
      }),
    );
    expect(withTable).to.deep.equal({ result: { text: "hello ada", workflowId: "greet-1", ctx: true, mailer: true } });
    expect(withoutTable?.error)
      .to.contain("class Greet has constructor parameters but no recorded types")
      .and.contain('"emitDecoratorMetadata": true');
  });
});
