import { expect } from "chai";
import { generate, type GenerateResult } from "../src/index.js";
import { Fixture } from "./support/fixture.js";

describe("discoverWorkflows", () => {
  let fixture: Fixture;
  let result: GenerateResult;

  before(async () => {
    fixture = Fixture.create({
      "src/fusee.ts": `export { Workflow as Flow, Step, Signal } from "@fusee/runtime";\n`,
      "src/other-lib.ts": `export function Workflow(_name?: string): ClassDecorator {\n  return () => undefined;\n}\nexport function Step(): MethodDecorator {\n  return () => undefined;\n}\n`,
      "src/aliased.ts": `import { Workflow as W, Step as S } from "@fusee/runtime";
import { Step as FakeStep } from "./other-lib.js";

@W()
export class Aliased {
  async run(x: number): Promise<number> {
    return (await this.double(x)) + (await this.triple(x));
  }

  @S() async double(x: number): Promise<number> {
    return x * 2;
  }

  @FakeStep() async triple(x: number): Promise<number> {
    return x * 3;
  }
}
`,
      "src/barrel.ts": `import { Flow, Signal, Step } from "./fusee.js";

@Flow("shipping")
export class ViaBarrel {
  async run(): Promise<void> {
    await this.pack();
  }

  @Step({ name: "pack-box" }) async pack(): Promise<void> {}

  @Signal({ name: "address-changed" }) moved(street: string): void {
    void street;
  }
}
`,
      "src/namespace.ts": `import * as fusee from "@fusee/runtime";

@fusee.Workflow({ name: "ns" })
export class ViaNamespace {
  async run(): Promise<string> {
    return "ok";
  }
}
`,
      "src/lookalike.ts": `import { Workflow } from "./other-lib.js";

function Local(): ClassDecorator {
  return () => undefined;
}

@Workflow("not-mine")
export class LookAlike {
  async run(): Promise<void> {}
}

@Local()
export class AlsoNot {
  async run(): Promise<void> {}
}
`,
    });
    result = await generate({ project: fixture.dir });
  });

  after(() => fixture.remove());

  it("finds the classes decorated with the runtime's @Workflow, whatever it is imported as", () => {
    expect(result.workflows.map((w) => [w.type, w.className, w.file])).to.deep.equal([
      ["Aliased", "Aliased", "src/aliased.ts"],
      ["ns", "ViaNamespace", "src/namespace.ts"],
      ["shipping", "ViaBarrel", "src/barrel.ts"],
    ]);
  });

  it("ignores a look-alike Workflow decorator declared in another module", () => {
    const types = result.workflows.map((w) => w.type);
    expect(types).not.to.include("not-mine");
    expect(result.workflows.map((w) => w.className)).not.to.include.members(["LookAlike", "AlsoNot"]);
  });

  it("counts only methods decorated with the runtime's @Step as steps", () => {
    const aliased = result.ir.workflows.find((w) => w.className === "Aliased");
    expect(aliased?.steps.map((s) => s.name)).to.deep.equal(["double"]);
    expect(aliased?.flows.find((f) => f.entry === "run")?.nodes.map((n) => (n.kind === "step" ? n.key : n.kind))).to.deep.equal(["double"]);
  });

  it("reads the names given in decorator options", () => {
    const barrel = result.ir.workflows.find((w) => w.className === "ViaBarrel");
    expect(barrel?.steps.map((s) => [s.name, s.member])).to.deep.equal([["pack-box", "pack"]]);
    expect(barrel?.signals.map((s) => [s.name, s.member])).to.deep.equal([["address-changed", "moved"]]);
  });

  it("locates each workflow at its class declaration", () => {
    const barrel = result.workflows.find((w) => w.className === "ViaBarrel");
    expect(barrel?.line).to.equal(3);
  });
});
