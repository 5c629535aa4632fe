import "reflect-metadata";
import { Inject, Injectable, Module, Scope } from "@nestjs/common";
import { expect } from "chai";
import { Config, ConfigError, Ctx, Engine, Step, Workflow } from "@fusee/runtime";
import { FuseeModule } from "../src/index.js";
import { Greet, GreetClient, GreetingService, PUNCTUATION } from "./fixtures/greeting.js";
import { boot } from "./support/boot.js";
import { rejection } from "./support/rejection.js";
import { tempDir } from "./support/temp-dir.js";

const greetingProviders = [GreetingService, { provide: PUNCTUATION, useValue: "!" }];

async function greet(engine: Engine, id: string, name: string): Promise<string> {
  const run = await engine.start(Greet, id, name);
  await run.signal("go");
  return run.result();
}

describe("FuseeModule", () => {
  describe("forRoot", () => {
    it("should provide the engine by its class", async () => {
      @Module({ imports: [FuseeModule.forRoot({ config: Config.memory(), workflows: [Greet] })], providers: greetingProviders })
      class AppModule {}
      const app = await boot(AppModule);
      try {
        expect(app.get(Engine)).to.be.an.instanceOf(Engine);
      } finally {
        await app.close();
      }
    });

    it("should build workflows with the providers of the application and @Inject tokens", async () => {
      @Module({ imports: [FuseeModule.forRoot({ config: Config.memory(), workflows: [Greet] })], providers: greetingProviders })
      class AppModule {}
      const app = await boot(AppModule);
      try {
        expect(await greet(app.get(Engine), "g-1", "ada")).to.equal("hello ada!");
      } finally {
        await app.close();
      }
    });

    it("should provide each listed client by its class, built on the module's engine", async () => {
      @Module({
        imports: [FuseeModule.forRoot({ config: Config.memory(), workflows: [Greet], clients: [GreetClient] })],
        providers: greetingProviders,
      })
      class AppModule {}
      const app = await boot(AppModule);
      try {
        const run = await app.get(GreetClient).start("g-1", "bob");
        await run.signal("go");
        expect(await run.result()).to.equal("hello bob!");
        expect((await app.get(Engine).status("g-1"))?.status).to.equal("ok");
      } finally {
        await app.close();
      }
    });

    it("should find @Workflow classes among a module's providers and build them with that module's providers", async () => {
      @Injectable()
      class LoudGreetings {
        greet(name: string): string {
          return `HELLO ${name.toUpperCase()}`;
        }
      }
      @Module({ providers: [Greet, { provide: GreetingService, useClass: LoudGreetings }, { provide: PUNCTUATION, useValue: "?" }] })
      class GreetingModule {}
      @Module({
        imports: [FuseeModule.forRoot({ config: Config.memory(), clients: [GreetClient] }), GreetingModule],
        providers: greetingProviders,
      })
      class AppModule {}
      const app = await boot(AppModule);
      try {
        expect(await greet(app.get(Engine), "g-1", "ada")).to.equal("HELLO ADA?");
      } finally {
        await app.close();
      }
    });

    it("should fail the start with Nest's own message when a provided workflow's dependency is missing", async () => {
      @Module({ providers: [Greet, GreetingService] })
      class GreetingModule {}
      @Module({ imports: [FuseeModule.forRoot({ config: Config.memory() }), GreetingModule] })
      class AppModule {}
      const error = await rejection(boot(AppModule));
      expect((error as Error).message).to.contain("Nest can't resolve dependencies of the Greet");
      expect((error as Error).message).to.contain("GreetingModule");
    });

    it("should give Engine and the clients to every module when isGlobal is set", async () => {
      @Injectable()
      class Greeter {
        constructor(
          readonly engine: Engine,
          readonly client: GreetClient,
        ) {}
      }
      @Module({ providers: [Greeter] })
      class FeatureModule {}
      @Module({
        imports: [
          FuseeModule.forRoot({ config: Config.memory(), workflows: [Greet], clients: [GreetClient], isGlobal: true }),
          FeatureModule,
        ],
        providers: greetingProviders,
      })
      class AppModule {}
      const app = await boot(AppModule);
      try {
        const greeter = app.get(Greeter);
        expect(greeter.engine).to.equal(app.get(Engine));
        expect(greeter.client).to.equal(app.get(GreetClient));
      } finally {
        await app.close();
      }
    });

    it("should refuse a workflows entry that is not a workflow class", async () => {
      @Module({
        imports: [FuseeModule.forRoot({ config: Config.memory(), workflows: [GreetingService as never] })],
        providers: greetingProviders,
      })
      class AppModule {}
      const error = await rejection(boot(AppModule));
      expect(error).to.be.an.instanceOf(ConfigError);
      expect((error as Error).message).to.contain("workflows[0] (GreetingService) is not a workflow class");
    });

    it("should refuse a client that fusee gen did not generate", () => {
      class NotAClient {
        constructor(readonly engine: Engine) {}
      }
      expect(() => FuseeModule.forRoot({ config: Config.memory(), workflows: [Greet], clients: [NotAClient as never] }))
        .to.throw(ConfigError)
        .with.property("message")
        .that.contains("clients[0] (NotAClient) is not a client generated by fusee gen");
    });

    it("should refuse a client whose workflow the engine does not run, and release the engine", async () => {
      const dir = tempDir("client");
      try {
        @Module({ imports: [FuseeModule.forRoot({ config: Config.local(dir.path), clients: [GreetClient] })] })
        class AppModule {}
        const error = await rejection(boot(AppModule));
        expect(error).to.be.an.instanceOf(ConfigError);
        expect((error as Error).message).to.contain("client GreetClient starts workflow 'Greet', which this engine does not run");
        // The failed start shut its engine down, so the data directory opens again.
        const engine = await Engine.open(Config.local(dir.path));
        await engine.shutdown();
      } finally {
        dir.remove();
      }
    });

    it("should refuse a workflow whose dependency no module provides, naming it", async () => {
      @Module({ imports: [FuseeModule.forRoot({ config: Config.memory(), workflows: [Greet] })], providers: [GreetingService] })
      class AppModule {}
      const error = await rejection(boot(AppModule));
      expect(error).to.be.an.instanceOf(ConfigError);
      expect((error as Error).message).to.contain(
        "workflow Greet needs Symbol(PUNCTUATION) (constructor parameter 2), which no module provides",
      );
    });

    it("should refuse a workflow that takes a request-scoped provider", async () => {
      @Injectable({ scope: Scope.REQUEST })
      class PerRequest {}
      @Workflow()
      class Scoped {
        constructor(
          readonly ctx: Ctx,
          readonly perRequest: PerRequest,
        ) {}
        async run(): Promise<void> {}
      }
      @Module({ imports: [FuseeModule.forRoot({ config: Config.memory(), workflows: [Scoped] })], providers: [PerRequest] })
      class AppModule {}
      const error = await rejection(boot(AppModule));
      expect(error).to.be.an.instanceOf(ConfigError);
      expect((error as Error).message).to.contain("workflow Scoped cannot take PerRequest (constructor parameter 1): it is request-scoped");
    });

    it("should inject properties marked with @Inject()", async () => {
      @Workflow()
      class Tagged {
        @Inject(PUNCTUATION) private readonly mark!: string;
        constructor(private readonly ctx: Ctx) {}
        async run(text: string): Promise<string> {
          return this.suffix(text);
        }
        @Step() async suffix(text: string): Promise<string> {
          return `${text}${this.mark} (${this.ctx.workflowId})`;
        }
      }
      @Module({ imports: [FuseeModule.forRoot({ config: Config.memory(), workflows: [Tagged] })], providers: greetingProviders })
      class AppModule {}
      const app = await boot(AppModule);
      try {
        const run = await app.get(Engine).start(Tagged, "t-1", "done");
        expect(await run.result()).to.equal("done! (t-1)");
      } finally {
        await app.close();
      }
    });
  });

  describe("forRootAsync", () => {
    it("should open the engine with options from a factory that takes an imported provider", async () => {
      @Injectable()
      class Settings {
        readonly config = Config.memory().shards(2);
      }
      @Module({ providers: [Settings], exports: [Settings] })
      class SettingsModule {}
      @Module({
        imports: [
          FuseeModule.forRootAsync({
            imports: [SettingsModule],
            inject: [Settings],
            useFactory: (settings: Settings) => ({ config: settings.config, workflows: [Greet] }),
            clients: [GreetClient],
          }),
        ],
        providers: greetingProviders,
      })
      class AppModule {}
      const app = await boot(AppModule);
      try {
        expect(app.get(Engine).describeEngine().shards).to.equal(2);
        const run = await app.get(GreetClient).start("g-1", "cy");
        await run.signal("go");
        expect(await run.result()).to.equal("hello cy!");
      } finally {
        await app.close();
      }
    });

    it("should refuse a factory that returns no Config", async () => {
      @Module({ imports: [FuseeModule.forRootAsync({ useFactory: () => ({ config: "./data" as never }) })] })
      class AppModule {}
      const error = await rejection(boot(AppModule));
      expect(error).to.be.an.instanceOf(ConfigError);
      expect((error as Error).message).to.contain('FuseeModule needs config, a Config such as Config.local("./data")');
    });
  });
});
