import "reflect-metadata";
import { expect } from "chai";
import { readFileSync, rmSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Config, Engine, exportJournal, writeExport } from "@fusee/runtime";
import { Pay } from "./fixtures/pay-workflows.js";
import { fusee, inProcess } from "./support/in-process.js";
import { ORDER, Project, WORKSPACE } from "./support/project.js";

const here = dirname(fileURLToPath(import.meta.url));
const workflows = join(here, "fixtures", "pay-workflows.js");
const changed = join(here, "fixtures", "pay-changed.js");

/** The source of the fixture workflow the runs were recorded with, as a project holds it. */
const PAY_SOURCE = readFileSync(join(WORKSPACE, "packages/cli/test/fixtures/pay-workflows.ts"), "utf8").replace(
  'import "reflect-metadata";\n',
  "",
);

interface GenJson {
  ok: boolean;
  failure?: string;
  possiblyBreaking: { kind: string; step: string; condition: string; message: string }[];
  journals?: {
    source: string;
    inFlight: number;
    finished: number;
    failing: { workflowId: string; type: string; runId: number; status: string; finished: boolean; error: string }[];
    durationMs: number;
  };
}

describe("fusee gen --check --against", function () {
  this.timeout(60_000);
  let tmp: string;
  let data: string;
  let project: Project;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "fusee-against-"));
    data = join(tmp, "data");
    const engine = await Engine.open(Config.local(data).keepHistory(true), { workflows: [Pay] });
    for (const id of ["pay-1", "pay-2", "pay-3"]) await engine.start(Pay, id, 10);
    await engine.idle();
    await engine.run("pay-1").signal("go");
    await engine.run("pay-1").result();
    await engine.shutdown();
    project = new Project({ "src/pay.ts": PAY_SOURCE });
    expect((await fusee("gen", "--project", project.dir)).code).to.equal(0);
  });

  after(() => {
    project.remove();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("replays every run in flight of a data directory with the new code, and exits 0 when all replay", async () => {
    const r = await fusee("gen", "--check", "--project", project.dir, "--against", data, "--workflows", workflows, "--json");
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    const out = JSON.parse(r.stdout) as GenJson;
    expect(out.journals).to.deep.include({ source: data, inFlight: 2, finished: 0, failing: [] });
    const text = await fusee("gen", "--check", "--project", project.dir, "--against", data, "--workflows", workflows);
    expect(text.stdout).to.contain(`journals of ${data}: 2 runs in flight replayed with the new code in`).and.to.contain("all replay");
  });

  it("names each run in flight the new code would break, with its first difference, and exits 5", async () => {
    // The lock still matches the project's source: only the journals say the new code breaks them.
    const r = await fusee("gen", "--check", "--project", project.dir, "--against", data, "--workflows", changed, "--json");
    expect(r.code, r.stdout + r.stderr).to.equal(5);
    const out = JSON.parse(r.stdout) as GenJson;
    expect(out).to.deep.include({ ok: false, failure: "breaking" });
    expect(out.journals?.failing.map((f) => [f.workflowId, f.status, f.finished])).to.deep.equal([
      ["pay-2", "running", false],
      ["pay-3", "running", false],
    ]);
    expect(out.journals?.failing[0]?.error).to.contain(
      "the journal holds step 'charge' (call #2), the code asked for step 'refund' (call #2)",
    );
    const text = await fusee("gen", "--check", "--project", project.dir, "--against", data, "--workflows", changed);
    expect(text.code).to.equal(5);
    expect(text.stdout).to.contain("would fail: pay-2 (Pay run 1, running):").and.to.contain("check failed: 2 runs in flight would fail");
  });

  it("replays a sample of finished runs with --finished, reporting one that no longer replays without failing the check", async () => {
    const r = await fusee(
      "gen",
      "--check",
      "--project",
      project.dir,
      "--against",
      data,
      "--workflows",
      changed,
      "--finished",
      "5",
      "--json",
    );
    const out = JSON.parse(r.stdout) as GenJson;
    expect(out.journals).to.deep.include({ inFlight: 2, finished: 1 });
    expect(out.journals?.failing.map((f) => [f.workflowId, f.finished])).to.deep.equal([
      ["pay-2", false],
      ["pay-3", false],
      ["pay-1", true],
    ]);
    const same = await fusee(
      "gen",
      "--check",
      "--project",
      project.dir,
      "--against",
      data,
      "--workflows",
      workflows,
      "--finished",
      "5",
      "--json",
    );
    expect(same.code).to.equal(0);
    expect((JSON.parse(same.stdout) as GenJson).journals).to.deep.include({ finished: 1, failing: [] });
  });

  it("replays an export file, and a folder of them, as it does a data directory", async () => {
    const engine = await Engine.open(Config.local(data).keepHistory(true), { workflows: [Pay] });
    const detail = await engine.describe("pay-2");
    await engine.shutdown();
    const file = join(tmp, "exports", "pay-2.json");
    writeExport(file, exportJournal(detail!));
    const one = await fusee("gen", "--check", "--project", project.dir, "--against", file, "--workflows", changed, "--json");
    expect(one.code).to.equal(5);
    expect((JSON.parse(one.stdout) as GenJson).journals?.failing.map((f) => f.workflowId)).to.deep.equal(["pay-2"]);
    const folder = await fusee(
      "gen",
      "--check",
      "--project",
      project.dir,
      "--against",
      join(tmp, "exports"),
      "--workflows",
      workflows,
      "--json",
    );
    expect(folder.code).to.equal(0);
    expect((JSON.parse(folder.stdout) as GenJson).journals).to.deep.include({ inFlight: 1, failing: [] });
  });

  it("shows a progress bar on a terminal while it replays", async () => {
    const r = await inProcess(["gen", "--check", "--project", project.dir, "--against", data, "--workflows", workflows], true);
    expect(r.code).to.equal(0);
    expect(r.stderr).to.contain("replaying journals");
  });

  it("exits 2 when --against lacks --check or --workflows, or names nothing", async () => {
    const noCheck = await fusee("gen", "--project", project.dir, "--against", data, "--workflows", workflows);
    expect(noCheck.code).to.equal(2);
    expect(noCheck.stderr).to.contain("--against goes with --check");
    const noModule = await fusee("gen", "--check", "--project", project.dir, "--against", data);
    expect(noModule.code).to.equal(2);
    expect(noModule.stderr).to.contain("--against needs --workflows MODULE");
    const missing = await fusee("gen", "--check", "--project", project.dir, "--against", join(tmp, "nothing"), "--workflows", workflows);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.contain("no such data directory or export file");
    const stray = await fusee("gen", "--check", "--project", project.dir, "--finished", "3");
    expect(stray.code).to.equal(2);
  });
});

describe("fusee gen --check on a possibly breaking change", () => {
  let project: Project;

  beforeEach(() => {
    project = new Project();
  });

  afterEach(() => project.remove());

  it("exits 7, naming the condition runs must have met to break, with failure possibly-breaking in --json", async () => {
    expect((await fusee("gen", "--project", project.dir)).code).to.equal(0);
    project.write(
      "src/order.ts",
      ORDER.replace(
        "const count = await this.reserve(id);",
        'const count = await this.reserve(id);\n    if (id.startsWith("vip")) await this.audit();',
      ),
    );
    const r = await fusee("gen", "--check", "--project", project.dir, "--json");
    expect(r.code, r.stdout + r.stderr).to.equal(7);
    const out = JSON.parse(r.stdout) as GenJson;
    expect(out.failure).to.equal("possibly-breaking");
    expect(out.possiblyBreaking.map((p) => [p.kind, p.step, p.condition])).to.deep.equal([
      ["inserted", "audit", '`id.startsWith("vip")` holds'],
    ]);
    const text = await fusee("gen", "--check", "--project", project.dir);
    expect(text.code).to.equal(7);
    expect(text.stdout).to.contain('possibly breaking: Workflow Order, run(): step "audit" was inserted');
    // gen writes it, and the check passes once the lock records it.
    expect((await fusee("gen", "--project", project.dir)).code).to.equal(0);
    expect((await fusee("gen", "--check", "--project", project.dir)).code).to.equal(0);
  });
});
