import { expect } from "chai";
import { container, injectable } from "tsyringe";
import { Ctx } from "../../src/workflow/ctx.js";
import { Step, Workflow } from "../../src/workflow/decorators.js";
import { ConfigError } from "../../src/core/errors.js";
import { onEachEngine } from "./harness.js";

@injectable()
class Greeter {
  greeting = "hello";
  greet(name: string): string {
    return `${this.greeting} ${name}`;
  }
}

@Workflow()
class Welcome {
  constructor(
    private readonly ctx: Ctx,
    private readonly greeter: Greeter,
  ) {}

  async run(name: string): Promise<string> {
    return this.say(name);
  }

  @Step() async say(name: string): Promise<string> {
    return `${this.greeter.greet(name)} from ${this.ctx.workflowId}`;
  }
}

class Missing {
  constructor(readonly x: string) {}
}

@Workflow()
class Broken {
  constructor(readonly missing: Missing) {}
  async run(): Promise<void> {}
}

onEachEngine("dependency injection", (kind) => {
  it("injects the run's Ctx and services from the root container", async () => {
    const engine = await kind().open({ workflows: [Welcome] });
    const run = await engine.start(Welcome, "w-1", "ada");
    expect(await run.result()).to.equal("hello ada from w-1");
    await engine.shutdown();
  });

  it("honours a user's container", async () => {
    const custom = container.createChildContainer();
    const greeter = new Greeter();
    greeter.greeting = "bonjour";
    custom.registerInstance(Greeter, greeter);
    const engine = await kind().open({ workflows: [Welcome], container: custom });
    const run = await engine.start(Welcome, "w-2", "ada");
    expect(await run.result()).to.equal("bonjour ada from w-2");
    await engine.shutdown();
  });

  it("reports a workflow whose dependencies cannot be resolved, naming it", async () => {
    const engine = await kind().open({ workflows: [Broken] });
    const run = await engine.start(Broken, "b-1", undefined);
    const err = await run.result().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message)
      .to.contain("Broken")
      .and.contain("b-1");
    await engine.shutdown();
  });
});
