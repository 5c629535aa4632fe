import "reflect-metadata";
import { Inject, Module, Optional } from "@nestjs/common";
import { expect } from "chai";
import { Config, ConfigError, Ctx, Engine, registerWorkflow, Workflow } from "@fusee/runtime";
import { FuseeModule } from "../../src/index.js";
import { boot } from "../support/boot.js";
import { rejection } from "../support/rejection.js";

const AUDIT = Symbol("AUDIT");

describe("WorkflowInstantiator", () => {
  describe("prepare", () => {
    it("should leave an @Optional() dependency that no module provides undefined", async () => {
      @Workflow()
      class Audited {
        constructor(
          private readonly ctx: Ctx,
          @Optional() @Inject(AUDIT) private readonly audit?: string[],
        ) {}
        async run(): Promise<string> {
          return `${this.ctx.workflowId}: ${this.audit === undefined ? "no audit" : "audited"}`;
        }
      }
      @Module({ imports: [FuseeModule.forRoot({ config: Config.memory(), workflows: [Audited] })] })
      class AppModule {}
      const app = await boot(AppModule);
      try {
        expect(await (await app.get(Engine).start(Audited, "a-1", undefined)).result()).to.equal("a-1: no audit");
      } finally {
        await app.close();
      }
    });

    it("should refuse a workflow class compiled without parameter types, saying how to compile it", async () => {
      class Bare {
        constructor(
          readonly ctx: unknown,
          readonly payments: unknown,
        ) {}
        async run(): Promise<void> {}
      }
      registerWorkflow(Bare);
      @Module({ imports: [FuseeModule.forRoot({ config: Config.memory(), workflows: [Bare] })] })
      class AppModule {}
      const error = await rejection(boot(AppModule));
      expect(error).to.be.an.instanceOf(ConfigError);
      expect((error as Error).message).to.contain(
        'workflow Bare takes 2 constructor parameters, but its class has no parameter types; compile it with "emitDecoratorMetadata": true',
      );
    });

    it("should refuse a provided workflow class compiled without parameter types too", async () => {
      class BareProvided {
        constructor(
          readonly ctx: unknown,
          readonly payments: unknown,
        ) {}
        async run(): Promise<void> {}
      }
      registerWorkflow(BareProvided);
      @Module({ imports: [FuseeModule.forRoot({ config: Config.memory() })], providers: [BareProvided] })
      class AppModule {}
      const error = await rejection(boot(AppModule));
      expect(error).to.be.an.instanceOf(ConfigError);
      expect((error as Error).message).to.contain(
        "workflow BareProvided takes 2 constructor parameters, but its class has no parameter types",
      );
    });

    it("should set a provided workflow's @Inject() properties from its module", async () => {
      @Workflow()
      class Stamped {
        @Inject(AUDIT) private readonly audit!: string[];
        constructor(private readonly ctx: Ctx) {}
        async run(): Promise<string> {
          return `${this.ctx.workflowId}: ${this.audit.join(", ")}`;
        }
      }
      @Module({ providers: [Stamped, { provide: AUDIT, useValue: ["stamped"] }] })
      class StampModule {}
      @Module({ imports: [FuseeModule.forRoot({ config: Config.memory() }), StampModule] })
      class AppModule {}
      const app = await boot(AppModule);
      try {
        expect(await (await app.get(Engine).start(Stamped, "s-1", undefined)).result()).to.equal("s-1: stamped");
      } finally {
        await app.close();
      }
    });

    it("should refuse a constructor parameter typed by an interface, asking for @Inject()", async () => {
      interface Payments {
        charge(cents: number): Promise<string>;
      }
      @Workflow()
      class Untyped {
        constructor(
          readonly ctx: Ctx,
          readonly payments: Payments,
        ) {}
        async run(): Promise<void> {}
      }
      @Module({ imports: [FuseeModule.forRoot({ config: Config.memory(), workflows: [Untyped] })] })
      class AppModule {}
      const error = await rejection(boot(AppModule));
      expect(error).to.be.an.instanceOf(ConfigError);
      expect((error as Error).message).to.contain("workflow Untyped's constructor parameter 1 has no injection token");
    });
  });
});
