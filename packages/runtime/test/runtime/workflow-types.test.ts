import "reflect-metadata";
import { expect } from "chai";
import { injectable } from "tsyringe";
import { Ctx } from "../../src/workflow/ctx.js";
import { registerStep, registerWorkflow } from "../../src/workflow/registry.js";
import { registerConstructorTypes, registerWorkflowTypes } from "../../src/workflow/workflow-types.js";
import { ConfigError } from "../../src/core/errors.js";
import { Step, Workflow } from "../../src/workflow/decorators.js";
import { TestEngine } from "../../src/testing/index.js";
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

// A chain of services as esbuild leaves it: @injectable() ran, but recorded no parameter types.
class Ledger {
  readonly lines: string[] = [];
}
@injectable()
class Tills {
  constructor(readonly ledger: Ledger) {}
}
@injectable()
class Cashier {
  constructor(readonly tills: Tills) {}
  take(n: number): string {
    this.tills.ledger.lines.push(`took ${n}`);
    return `took ${n}`;
  }
}
for (const cls of [Tills, Cashier]) Reflect.deleteMetadata("design:paramtypes", cls);
injectable()(Tills);
injectable()(Cashier);

class Checkout {
  constructor(
    private readonly ctx: Ctx,
    private readonly cashier: Cashier,
  ) {}
  async run(n: number): Promise<string> {
    return this.ctx.step("take", async () => this.cashier.take(n));
  }
}
registerWorkflow(Checkout, { name: "checkout" });
registerWorkflowTypes(Checkout, { constructorParams: [Ctx, Cashier] });

describe("services without decorator metadata", () => {
  it("fails the run with a ConfigError naming the class, the path to it, the missing setting and the fix", async () => {
    const engine = await TestEngine.create({ workflows: [Checkout] });
    const run = await engine.start<string>("checkout", "c-1", 3);
    const error = await run.result().catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).to.contain("workflow checkout (ID c-1)").and.contain("class Cashier (needed through Checkout → Cashier)");
    expect(message).to.contain("emitDecoratorMetadata").and.contain("fusee gen").and.contain("@inject(Token)");
    await engine.shutdown();
  });

  it("are injected once registerConstructorTypes gave each class its parameter types", async () => {
    registerConstructorTypes(Cashier, [Tills]);
    registerConstructorTypes(Tills, [Ledger]);
    const engine = await TestEngine.create({ workflows: [Checkout] });
    const run = await engine.start<string>("checkout", "c-2", 4);
    expect(await run.result()).to.equal("took 4");
    await engine.shutdown();
  });

  it("keeps the types a compiler recorded", () => {
    @injectable()
    class Drawer {
      constructor(readonly ledger: Ledger) {}
    }
    registerConstructorTypes(Drawer, [Object]);
    expect(Reflect.getOwnMetadata("design:paramtypes", Drawer)).to.deep.equal([Ledger]);
  });
});

describe("decorators called in the standard (TC39) form", () => {
  it("are refused with a ConfigError naming the member and the setting", () => {
    const call = () => Step()(function charge() {} as never, { kind: "method", name: "charge" } as never, undefined as never);
    expect(call).to.throw(ConfigError, /@Step on charge was called as a standard \(TC39\) decorator.*"experimentalDecorators": true/);
    const workflow = () => (Workflow() as (t: object, c: unknown) => void)(class Pay {}, { kind: "class", name: "Pay" });
    expect(workflow).to.throw(ConfigError, /@Workflow on Pay/);
  });
});
