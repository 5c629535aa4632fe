import { expect } from "chai";
import { generate } from "../src/index.js";
import { Fixture } from "./support/fixture.js";

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
