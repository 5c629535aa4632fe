import "reflect-metadata";
import { expect } from "chai";
import { ConfigError, Ctx, type WorkflowClass } from "@fusee/runtime";
import { WorkflowContainer } from "../../src/injector/workflow-container.js";
import type { WorkflowInstantiator } from "../../src/injector/workflow-instantiator.js";

class Pay {
  constructor(readonly ctx: Ctx) {}
  async run(): Promise<void> {}
}

/** Builds any class with just the run's context, recording what it was asked for. */
function instantiator(asked: Array<{ cls: WorkflowClass; ctx: Ctx }>): WorkflowInstantiator {
  return {
    instantiate: (cls: WorkflowClass, ctx: Ctx) => {
      asked.push({ cls, ctx });
      return new cls(ctx);
    },
  } as unknown as WorkflowInstantiator;
}

/** A stand-in for the context the engine makes per run. */
const runContext = (): Ctx => Object.create(Ctx.prototype) as Ctx;

describe("WorkflowContainer", () => {
  describe("resolve", () => {
    it("should build a workflow with the Ctx registered in a child container, as the engine does for each run", () => {
      const asked: Array<{ cls: WorkflowClass; ctx: Ctx }> = [];
      const root = new WorkflowContainer(instantiator(asked));
      const ctx = runContext();
      const child = root.createChildContainer().register(Ctx, { useValue: ctx });
      const pay = child.resolve(Pay);
      expect(pay).to.be.an.instanceOf(Pay);
      expect(pay.ctx).to.equal(ctx);
      expect(child.resolve(Ctx)).to.equal(ctx);
      expect(asked).to.deep.equal([{ cls: Pay, ctx }]);
    });

    it("should refuse to build a workflow outside a run, and any token that is not a class", () => {
      const root = new WorkflowContainer(instantiator([]));
      expect(() => root.resolve(Pay)).to.throw(ConfigError, "does not support resolve(Pay)");
      const child = root.createChildContainer().register(Ctx, { useValue: runContext() });
      expect(() => child.resolve("PAYMENTS")).to.throw(ConfigError, 'does not support resolve("PAYMENTS")');
    });
  });

  describe("register", () => {
    it("should refuse anything but the run's Ctx, saying that providers belong in Nest modules", () => {
      const root = new WorkflowContainer(instantiator([]));
      expect(() => root.register(Pay, { useValue: new Pay(runContext()) })).to.throw(
        ConfigError,
        "provide what a workflow needs in a Nest module instead",
      );
      expect(() => root.registerSingleton(Pay)).to.throw(ConfigError, "registerSingleton(Pay)");
    });
  });
});
