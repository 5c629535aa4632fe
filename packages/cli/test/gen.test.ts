import { spawn } from "node:child_process";
import { expect } from "chai";
import { runCli } from "../src/cli.js";
import { MAIN, ORDER, Project, RecordingIo } from "./support/project.js";

/** Runs the real `fusee` process and collects its exit code and output. */
function fusee(
  args: readonly string[],
  cwd: string,
  onOutput?: (out: string, child: ReturnType<typeof spawn>) => void,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      onOutput?.(out, child);
    });
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

const INSERTED = ORDER.replace("const count = await this.reserve(id);", "const count = await this.reserve(id);\n    await this.audit();");

describe("fusee gen", () => {
  let project: Project;

  beforeEach(() => {
    project = new Project();
  });

  afterEach(() => project.remove());

  it("generates the client, the worker type table and the lock, and exits 0", async () => {
    const io = new RecordingIo(project.dir);
    expect(await runCli(["gen"], io)).to.equal(0);
    expect(io.out).to.contain("fusee gen: 1 workflow (Order)");
    expect(io.out).to.contain("written   src/fusee.generated.ts");
    expect(io.out).to.contain("written   fusee.lock.json");
    expect(io.err).to.equal("");
    expect(project.read("src/fusee.generated.ts")).to.contain("export class OrderClient {");
  });

  it("exits 4 with --check while a generated file is stale, naming it, and 0 once regenerated", async () => {
    const io = new RecordingIo(project.dir);
    expect(await runCli(["gen", "--check", "--project", project.dir], io)).to.equal(4);
    expect(io.out).to.contain("stale     src/fusee.generated.ts").and.to.contain("check failed");
    expect(project.exists("src/fusee.generated.ts")).to.equal(false);
    expect(await runCli(["gen", "-p", project.dir], new RecordingIo(project.dir))).to.equal(0);
    expect(await runCli(["gen", "--check"], new RecordingIo(project.dir))).to.equal(0);
  });

  it("refuses an unguarded breaking change with exit 5, naming the workflow, the step, file:line and the fix", async () => {
    await runCli(["gen"], new RecordingIo(project.dir));
    const lock = project.read("fusee.lock.json");
    project.write("src/order.ts", INSERTED);
    const io = new RecordingIo(project.dir);
    expect(await runCli(["gen"], io)).to.equal(5);
    expect(io.err)
      .to.contain("refused to record 1 replay-breaking change; nothing was written")
      .and.to.contain('Workflow Order, run(): step "audit" was inserted (src/order.ts:9)')
      .and.to.contain('if (this.ctx.patched("add-audit"))')
      .and.to.contain("--accept-breaking");
    expect(project.read("fusee.lock.json")).to.equal(lock);

    const check = new RecordingIo(project.dir);
    expect(await runCli(["gen", "--check"], check)).to.equal(5);
    expect(check.out).to.contain('breaking: Workflow Order, run(): step "audit" was inserted');
    // Regenerating would refuse too, so the summary does not advise it.
    expect(check.out).to.contain("check failed: 1 replay-breaking change").and.not.to.contain("(run `npx fusee gen`)");

    const json = new RecordingIo(project.dir);
    expect(await runCli(["gen", "--check", "--json"], json)).to.equal(5);
    expect((JSON.parse(json.out) as { failure: string }).failure).to.equal("breaking");

    expect(check.out).to.contain("npx fusee gen --check --against <data dir>");

    const accepting = new RecordingIo(project.dir);
    expect(await runCli(["gen", "--accept-breaking"], accepting)).to.equal(0);
    expect(project.read("fusee.lock.json")).not.to.equal(lock);
    // Whoever accepts a break hears what becomes of runs in flight and how to undo it.
    expect(accepting.out)
      .to.contain("Runs of Order already in flight stop")
      .and.to.contain("--status stopped")
      .and.to.contain("deploy the previous code with its fusee.lock.json");
  });

  it("prints one JSON object with --json, for success and for errors alike", async () => {
    const io = new RecordingIo(project.dir);
    expect(await runCli(["gen", "--json"], io)).to.equal(0);
    const result = JSON.parse(io.out) as { ok: boolean; workflows: { type: string }[]; files: { status: string }[] };
    expect(result.ok).to.equal(true);
    expect(result.workflows.map((w) => w.type)).to.deep.equal(["Order"]);
    expect(result.files.map((f) => f.status)).to.deep.equal(["written", "written", "written"]);

    project.write("src/order.ts", INSERTED);
    const failing = new RecordingIo(project.dir);
    expect(await runCli(["gen", "--json"], failing)).to.equal(5);
    const error = JSON.parse(failing.out) as {
      ok: boolean;
      failure: string;
      error: { code: string; breaking: { kind: string; step: string; at: unknown }[] };
    };
    expect(error.ok).to.equal(false);
    expect(error.failure).to.equal("breaking");
    expect(error.error.code).to.equal("FUSEE_GEN_BREAKING_CHANGE");
    expect(error.error.breaking.map((b) => [b.kind, b.step, b.at])).to.deep.equal([
      ["inserted", "audit", { file: "src/order.ts", line: 9 }],
    ]);
  });

  it("exits 6 on a problem in workflow source, naming file:line", async () => {
    project.write(
      "src/order.ts",
      ORDER.replace("@Workflow()", '@Workflow({ patches: ["v2"] })').replace(
        "return this.charge(count);",
        'return this.ctx.patched("v3") ? "" : this.charge(count);',
      ),
    );
    const io = new RecordingIo(project.dir);
    expect(await runCli(["gen"], io)).to.equal(6);
    expect(io.err)
      .to.contain('src/order.ts:9: Patch ID "v3" is not declared by workflow Order')
      .and.to.contain("[FUSEE_GEN_UNDECLARED_PATCH]");
  });

  it("exits 2 on usage and configuration errors", async () => {
    const unknown = new RecordingIo(project.dir);
    expect(await runCli(["gen", "--frobnicate"], unknown)).to.equal(2);
    expect(unknown.err).to.contain("unknown option '--frobnicate'");

    const both = new RecordingIo(project.dir);
    expect(await runCli(["gen", "--check", "--watch"], both)).to.equal(2);
    expect(both.err).to.contain("cannot be used with");

    const missing = new RecordingIo(project.dir);
    expect(await runCli(["gen", "--project", project.path("src")], missing)).to.equal(2);
    expect(missing.err).to.contain("No tsconfig.json").and.to.contain("[FUSEE_GEN_CONFIG]");

    expect(await runCli(["nothing-like-this"], new RecordingIo(project.dir))).to.equal(2);
    expect(await runCli([], new RecordingIo(project.dir))).to.equal(2);
  });

  it("shows help for the program and for gen, with the exit codes, and exits 0", async () => {
    const top = new RecordingIo(project.dir);
    expect(await runCli(["--help"], top)).to.equal(0);
    expect(top.out).to.contain("gen [options]").and.to.contain("Exit codes:");
    const gen = new RecordingIo(project.dir);
    expect(await runCli(["gen", "--help"], gen)).to.equal(0);
    for (const option of [
      "--project <dir>",
      "--out <file>",
      "--check",
      "--watch",
      "--accept-breaking",
      "--against <path>",
      "--workflows <module>",
      "--finished <n>",
      "--keys <file>",
      "--json",
    ])
      expect(gen.out).to.contain(option);
    expect(gen.out)
      .to.contain("4  gen --check: generated files are stale")
      .and.to.contain("5  gen: a replay-breaking change")
      .and.to.contain("6  gen: a problem in workflow source")
      .and.to.contain("7  gen --check: only possibly breaking changes");
  });

  it("colours its output only when told the output is a terminal", async () => {
    const plain = new RecordingIo(project.dir, false);
    await runCli(["gen"], plain);
    expect(plain.out).not.to.contain("\u001b[");
    const coloured = new RecordingIo(project.dir, true);
    await runCli(["gen", "--check"], coloured);
    expect(coloured.out).to.contain("\u001b[");
  });

  it("regenerates with --watch on each change until interrupted, then exits 0", async () => {
    const io = new RecordingIo(project.dir);
    const exit = runCli(["gen", "--watch"], io);
    await until(() => io.out.includes("watching for changes"));
    project.write("src/order.ts", ORDER.replace("@Signal() cancel", "@Signal() pause(): void {}\n  @Signal() cancel"));
    await until(() => io.out.includes("changed: src/order.ts"));
    expect(project.read("src/fusee.generated.ts")).to.contain("pause(): Promise<void>;");
    io.sendInterrupt();
    expect(await exit).to.equal(0);
  });

  describe("as a process", () => {
    it("exits with the documented codes and prints no colours when its output is not a terminal", async function () {
      this.timeout(30_000);
      const first = await fusee(["gen"], project.dir);
      expect(first.code, first.err).to.equal(0);
      expect(first.out).not.to.contain("\u001b[");
      const usage = await fusee(["gen", "--nope"], project.dir);
      expect(usage.code).to.equal(2);
    });

    it("keeps watching until SIGINT and then exits 0", async function () {
      this.timeout(30_000);
      let sent = false;
      const result = await fusee(["gen", "--watch"], project.dir, (out, child) => {
        if (!sent && out.includes("watching for changes")) {
          sent = true;
          child.kill("SIGINT");
        }
      });
      expect(result.code, result.err).to.equal(0);
    });
  });
});

async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
