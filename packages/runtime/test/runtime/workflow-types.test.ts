import "reflect-metadata";
import { expect } from "chai";
import { injectable } from "tsyringe";
import { Ctx } from "../../src/workflow/ctx.js";
import { registerStep, registerWorkflow } from "../../src/workflow/registry.js";
import { registerWorkflowTypes } from "../../src/workflow/workflow-types.js";
import { onEachEngine } from "./harness.js";

class WeighedParcel {
  weight = 0;
  label(): string {
    return `${this.weight} kg`;
  }
}

@injectable()
class Scale {
  weigh(n: number): WeighedParcel {
    const p = new WeighedParcel();
    p.weight = n;
    return p;
  }
}

// Written as a bundler without decorator metadata would leave it: no decorators, no design:paramtypes.
class Weigh {
  constructor(
    private readonly ctx: Ctx,
    private readonly scale: Scale,
  ) {}
  async run(n: number): Promise<string> {
    const parcel = await this.measure(n);
    return `${parcel instanceof WeighedParcel} ${parcel.label()} ${this.ctx.workflowId}`;
  }
  async measure(n: number): Promise<WeighedParcel> {
    return this.scale.weigh(n);
  }
}
registerWorkflow(Weigh, { name: "weigh" });
registerStep(Weigh, "measure");
registerWorkflowTypes(Weigh, { constructorParams: [Ctx, Scale], steps: { measure: { args: [Number], result: WeighedParcel } } });

onEachEngine("types registered by fusee gen", (kind) => {
  it("injects constructor parameters and rebuilds result classes without decorator metadata", async () => {
    expect(Reflect.getOwnMetadata("design:paramtypes", Weigh)).to.deep.equal([Ctx, Scale]);
    const engine = await kind().open({ workflows: [Weigh] });
    const run = await engine.start<string>("weigh", "w-1", 12);
    expect(await run.result()).to.equal("true 12 kg w-1");
    await engine.shutdown();
  });
});
