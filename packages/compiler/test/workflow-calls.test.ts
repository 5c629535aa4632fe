import { join } from "node:path";
import { WORKFLOW_CALLS } from "@fusee/runtime/calls";
import { expect } from "chai";
import { Node, Project, SyntaxKind } from "ts-morph";
import { generate } from "../src/index.js";
import { Fixture, WORKSPACE } from "./support/fixture.js";

/** The recorded `run` path of the one workflow of a fixture project. */
async function runPath(source: string): Promise<unknown[]> {
  const fixture = Fixture.create({ "src/calls.ts": source });
  try {
    await generate({ project: fixture.dir });
    const lock = JSON.parse(fixture.read("fusee.lock.json")) as { workflows: Record<string, { paths: { run: unknown[] } }> };
    return lock.workflows.Calls?.paths.run ?? [];
  } finally {
    fixture.remove();
  }
}

describe("the workflow calls gen records", function () {
  this.timeout(60_000);

  it("records ctx.removeAttributes as the attributes call the runtime journals and replay checks", async () => {
    const path = await runPath(`import { Workflow, Ctx } from "@fusee/runtime";

@Workflow()
export class Calls {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<void> {
    this.ctx.setAttributes({ stage: "a" });
    this.ctx.removeAttributes("stage");
    await this.ctx.step("after", async () => 1);
  }
}
`);
    expect(path).to.deep.equal([{ call: "attributes" }, { call: "attributes" }, "after"]);
  });
});

describe("the runtime's call table", function () {
  this.timeout(60_000);

  it("describes every public member of Ctx as the runtime declares it, and nothing else", () => {
    const project = new Project({ skipAddingFilesFromTsConfig: true });
    const declarations = project.addSourceFileAtPath(join(WORKSPACE, "packages/runtime/dist/src/workflow/ctx.d.ts"));
    const ctx = declarations.getClassOrThrow("Ctx");
    const members = ctx
      .getMembers()
      .filter((m) => !Node.isConstructorDeclaration(m))
      .filter((m) => !(Node.isModifierable(m) && (m.hasModifier(SyntaxKind.PrivateKeyword) || m.hasModifier(SyntaxKind.ProtectedKeyword))))
      .map((m) => (Node.hasName(m) ? m.getName() : m.getText()));
    expect([...new Set(members)].sort()).to.deep.equal(Object.keys(WORKFLOW_CALLS).sort());
  });

  it("records every journaling Ctx call in the lock as the runtime journals it", async () => {
    const path = await runPath(`import { Workflow, Ctx } from "@fusee/runtime";

@Workflow()
export class Calls {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<void> {
    this.ctx.now();
    await this.ctx.step("inline", async () => Date.now());
    await this.ctx.sleep("1s");
    await this.ctx.sleepUntil(0);
    await this.ctx.waitFor("go");
    await this.ctx.waitFor("late", { timeout: "1s" });
    await this.ctx.condition(() => true);
    this.ctx.setAttributes({ a: 1 });
    this.ctx.removeAttributes("a");
    await this.ctx.startChild("Other", "c1");
    await this.ctx.executeChild("Other", "c2");
    await this.ctx.awaitCompletion("ask", () => 1);
    await this.ctx.startWorkflow("Other", "o1");
    await this.ctx.signalWorkflow("o1", "poke");
    await this.ctx.cancelWorkflow("o1");
    await this.ctx.updateWorkflow("o1", "change");
    await this.ctx.signalWithStart("Other", "o2", undefined, "poke");
    if (this.ctx.patched("p1")) await this.ctx.step("patched", async () => 1);
    this.ctx.deprecatePatch("p0");
  }
}
`);
    expect(path).to.deep.equal([
      "inline",
      { call: "timer" },
      { call: "timer" },
      { wait: 'signal "go"' },
      { call: "wait-timer" },
      { wait: "condition" },
      { call: "attributes" },
      { call: "attributes" },
      { call: "child", id: "c1" },
      { call: "child", id: "c2" },
      { wait: 'child "c2"' },
      "ask",
      { wait: 'completion "ask"' },
      "ctx.startWorkflow",
      "ctx.signalWorkflow",
      "ctx.cancelWorkflow",
      "ctx.updateWorkflow",
      "ctx.signalWithStart",
      { patch: "p1", then: ["patched"], else: [] },
      { deprecatedPatch: "p0" },
    ]);
  });
});
