import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { expect } from "chai";
import { generate } from "@fusee/compiler";
import ts from "typescript";
import { run, WORKSPACE } from "../support/workspace.js";
import { blockFiles, type CodeBlock, codeBlocks, fuseeCommands, npmRuns } from "./code-blocks.js";

const FUSEE = join(WORKSPACE, "packages/cli/bin/fusee.js");

/** Every markdown document a user reads: the README, the contributors' guide, the guides, and each package's and example's README. */
function documents(): string[] {
  const inDir = (dir: string): string[] =>
    readdirSync(join(WORKSPACE, dir))
      .filter((f) => f.endsWith(".md"))
      .map((f) => join(dir, f));
  const readmes = ["packages", "examples"].flatMap((group) =>
    readdirSync(join(WORKSPACE, group))
      .map((name) => join(group, name, "README.md"))
      .filter((f) => existsSync(join(WORKSPACE, f))),
  );
  return ["README.md", "CONTRIBUTING.md", ...inDir("docs"), ...inDir("packages/runtime/docs"), ...readmes];
}

/** What a user's tsconfig.json holds (docs/getting-started.md), with every file a module of its own. */
const COMPILER_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  moduleDetection: ts.ModuleDetectionKind.Force,
  strict: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  skipLibCheck: true,
  types: ["node", "mocha"],
};

/** The same, as tsconfig.json spells it, for `fusee gen`. */
const TSCONFIG = {
  target: "ES2022",
  module: "NodeNext",
  moduleResolution: "NodeNext",
  moduleDetection: "force",
  strict: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  skipLibCheck: true,
  types: ["node", "mocha"],
};

const where = (block: CodeBlock): string => `${block.doc}:${block.line}`;

/**
 * The code blocks of the documentation, checked against the built packages: TypeScript blocks are
 * compiled (the blocks of one document form one project, generated clients included, as `fusee
 * gen` writes them), blocks marked runnable are run, JSON blocks parse, and every `fusee` command
 * and `npm run` script a shell block names exists and takes the flags it is given.
 */
describe("the documentation's code blocks", function () {
  this.timeout(120_000);
  const blocks = documents().flatMap((doc) => codeBlocks(join(WORKSPACE, doc), doc));
  const checked = blocks.filter((b) => b.skip === undefined);
  let scratch: string;
  /** Each TypeScript block's files, by their path in the scratch folder. */
  const filesOf = new Map<CodeBlock, string[]>();
  let program: ts.Program;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), "fusee-doc-blocks-"));
    symlinkSync(join(WORKSPACE, "node_modules"), join(scratch, "node_modules"), "dir");
    writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "doc-blocks", private: true, type: "module" }));
    const projects = new Set<string>();
    for (const block of checked.filter((b) => b.lang === "ts")) {
      const project = join(scratch, block.doc.replace(/\.md$/, "").replace(/[/.]/g, "-"));
      projects.add(project);
      const paths: string[] = [];
      for (const [path, text] of blockFiles(block)) {
        const file = join(project, path);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, existsSync(file) ? `${readFileSync(file, "utf8")}\n${text}` : text);
        paths.push(file);
      }
      filesOf.set(block, paths);
    }
    // A guide's files import the clients `fusee gen` writes from them; write them the same way.
    await Promise.all(
      [...projects].map(async (project) => {
        writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions: TSCONFIG, include: ["src"] }));
        const sources = readdirSync(join(project, "src")).map((f) => readFileSync(join(project, "src", f), "utf8"));
        if (sources.some((s) => s.includes("./fusee.generated.js") || s.includes("./fusee.workflows.generated.js"))) {
          await generate({ project });
        }
      }),
    );
    const roots = [...projects].flatMap((project) => readdirSync(join(project, "src")).map((f) => join(project, "src", f)));
    // A package a guide names that this workspace does not install (a logger, an OpenTelemetry SDK) is typed `any`.
    const missing = new Set(
      roots
        .flatMap((f) => [...readFileSync(f, "utf8").matchAll(/from "([^".][^"]*)"/g)].map((m) => m[1] ?? ""))
        .filter((spec) => !spec.startsWith("@fusee/") && !existsSync(join(WORKSPACE, "node_modules", packageOf(spec)))),
    );
    writeFileSync(join(scratch, "missing-packages.d.ts"), [...missing].map((m) => `declare module "${m}";`).join("\n"));
    roots.push(join(scratch, "missing-packages.d.ts"));
    program = ts.createProgram(roots, { ...COMPILER_OPTIONS, rootDir: scratch, outDir: join(scratch, "dist") });
  });

  after(() => rmSync(scratch, { recursive: true, force: true }));

  it("finds the blocks, and a reason for each one left unchecked", () => {
    expect(checked.filter((b) => b.lang === "ts").length).to.be.greaterThan(20);
    expect(blocks.filter((b) => b.skip === "").map(where), "skipped without a reason").to.deep.equal([]);
  });

  it("compiles every TypeScript block against the built packages", () => {
    const problems = ts.getPreEmitDiagnostics(program).map((d) => {
      const file = d.file === undefined ? "" : relative(scratch, d.file.fileName);
      const block = [...filesOf].find(([, paths]) => d.file !== undefined && paths.includes(d.file.fileName))?.[0];
      const line = d.file === undefined || d.start === undefined ? 0 : d.file.getLineAndCharacterOfPosition(d.start).line + 1;
      return `${block === undefined ? file : where(block)} (${file}:${line}): ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
    });
    if (process.env.DOC_BLOCKS_OUT !== undefined) writeFileSync(process.env.DOC_BLOCKS_OUT, problems.join("\n"));
    expect(problems).to.deep.equal([]);
  });

  it("runs every block marked runnable, which exits 0", async () => {
    const runnable = checked.filter((b) => b.run);
    expect(runnable.length).to.be.greaterThan(0);
    const emitted = program.emit();
    expect(emitted.emitSkipped).to.equal(false);
    for (const block of runnable) {
      const [file] = filesOf.get(block) ?? [];
      if (file === undefined) expect.fail(`${where(block)} is marked runnable but is not TypeScript`);
      const cwd = mkdtempSync(join(scratch, "run-"));
      const js = join(scratch, "dist", relative(scratch, file).replace(/\.ts$/, ".js"));
      const { stdout } = await run(process.execPath, [js], { cwd, timeout: 60_000 });
      expect(stdout, where(block)).to.not.equal("");
    }
  });

  it("parses every JSON block", () => {
    const broken = checked
      .filter((b) => b.lang === "json")
      .flatMap((b) => {
        try {
          JSON.parse(b.code);
          return [];
        } catch (e) {
          return [`${where(b)}: ${(e as Error).message}`];
        }
      });
    expect(broken).to.deep.equal([]);
  });

  it("names only fusee commands and flags that exist", async () => {
    const uses = checked.filter((b) => b.lang === "sh").flatMap((b) => fuseeCommands(b.code).map((words) => ({ block: b, words })));
    expect(uses.length).to.be.greaterThan(10);
    const commands = [...new Set(uses.map((u) => u.words[0] ?? ""))];
    const helps = new Map(
      await Promise.all(
        commands.map(async (command) => {
          const help = await run(process.execPath, [FUSEE, command, "--help"], { cwd: WORKSPACE }).then(
            (r) => r.stdout,
            () => "",
          );
          return [command, help] as const;
        }),
      ),
    );
    const wrong: string[] = [];
    for (const { block, words } of uses) {
      const [command = "", ...rest] = words;
      const help = helps.get(command) ?? "";
      if (!help.startsWith(`Usage: fusee ${command}`)) {
        wrong.push(`${where(block)}: fusee ${command} is not a command`);
        continue;
      }
      for (const flag of rest.flatMap((w) => w.match(/^\[*(--?[a-z][\w-]*)/)?.[1] ?? [])) {
        if (!new RegExp(`(^|[\\s,])${flag}\\b`, "m").test(help)) wrong.push(`${where(block)}: fusee ${command} takes no ${flag}`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it("names only npm scripts and benchmarks that exist", async () => {
    // A script is looked up in the package.json nearest the document: an example's own, or the workspace's.
    const scriptsOf = (doc: string): Record<string, string> => {
      for (let dir = dirname(join(WORKSPACE, doc)); ; dir = dirname(dir)) {
        const manifest = join(dir, "package.json");
        if (existsSync(manifest)) return (JSON.parse(readFileSync(manifest, "utf8")) as { scripts?: Record<string, string> }).scripts ?? {};
      }
    };
    const usage = await run(process.execPath, [join(WORKSPACE, "packages/runtime/dist/bench/main.js")], { cwd: WORKSPACE }).then(
      () => "",
      (e: Error) => e.message,
    );
    const benchmarks = /<([\w|-]+)>/.exec(usage)?.[1]?.split("|") ?? [];
    expect(benchmarks).to.include("log");
    const wrong: string[] = [];
    for (const block of checked.filter((b) => b.lang === "sh")) {
      const scripts = scriptsOf(block.doc);
      for (const { script, args } of npmRuns(block.code)) {
        if (!(script in scripts)) wrong.push(`${where(block)}: no npm script ${script}`);
        const [name] = args;
        if (script === "bench" && name !== undefined && !benchmarks.includes(name)) wrong.push(`${where(block)}: no benchmark ${name}`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it("gives the exit codes in the CLI's README that fusee --help gives", async () => {
    const { stdout } = await run(process.execPath, [FUSEE, "--help"], { cwd: WORKSPACE });
    const help = stdout.slice(stdout.indexOf("Exit codes:"));
    const codes = [...help.matchAll(/^\s+(\d+)\s+(.+)$/gm)].map((m) => [m[1], m[2]?.trim()]);
    expect(codes.length).to.be.greaterThan(5);
    const readme = readFileSync(join(WORKSPACE, "packages/cli/README.md"), "utf8");
    const table = [...readme.matchAll(/^\|\s*(\d+)\s*\|\s*(.+?)\s*\|$/gm)].map((m) => [m[1], m[2]]);
    expect(table).to.deep.equal(codes);
  });
});

/** The package a module specifier names: `@scope/name` or `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}
