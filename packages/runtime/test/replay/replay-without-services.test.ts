import "reflect-metadata";
import { expect } from "chai";
import { container } from "tsyringe";
import { ConfigError } from "../../src/core/errors.js";
import { exportJournal } from "../../src/replay/export-journal.js";
import { Replayer } from "../../src/replay/replayer.js";
import type { ExportedJournal } from "../../src/replay/export-format.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Step, Workflow } from "../../src/workflow/decorators.js";

/** A decorator that records constructor types as another framework's (NestJS's `@Injectable()`) would, unknown to tsyringe. */
const frameworkInjectable = (): ClassDecorator => () => undefined;

class Database {
  lookup(name: string): string {
    return `db:${name}`;
  }
}

/** A service that lives in another container: tsyringe was never told of it. */
@frameworkInjectable()
class Mailer {
  constructor(private readonly db: Database) {}
  send(name: string): string {
    return `mail to ${this.db.lookup(name)}`;
  }
}

@Workflow("welcome")
class Welcome {
  constructor(
    private readonly ctx: Ctx,
    private readonly mailer: Mailer,
  ) {}

  async run(name: string): Promise<string> {
    return this.send(name);
  }

  @Step() async send(name: string): Promise<string> {
    return this.mailer.send(name);
  }
}

/** The same workflow type, reading its service outside a step. */
@Workflow("welcome")
class WelcomeReadingOutside {
  constructor(
    private readonly ctx: Ctx,
    private readonly mailer: Mailer,
  ) {}

  async run(name: string): Promise<string> {
    const greeting = this.mailer.send("x");
    return `${greeting}${await this.ctx.step("send", async () => name)}`;
  }
}

/** Runs `Welcome` with its services from a container, as the application that owns them would, and exports its journal. */
async function recorded(): Promise<ExportedJournal> {
  const services = container.createChildContainer();
  services.register(Mailer, { useValue: new Mailer(new Database()) });
  const engine = await TestEngine.create({ workflows: [Welcome], container: services });
  try {
    const run = await engine.start(Welcome, "w-1", "ada");
    expect(await run.result()).to.equal("mail to db:ada");
    return exportJournal(await run.describe());
  } finally {
    await engine.shutdown();
  }
}

describe("replaying workflows whose services live in another container", () => {
  it("replays with stand-ins for the services, since no step body runs", async () => {
    const result = await new Replayer().register(Welcome).replay(await recorded());
    expect(result.error).to.equal(undefined);
    expect(result).to.include({ ok: true, finished: true });
  });

  it("names the service and the member when workflow code uses it outside a step", async () => {
    const result = await new Replayer().register(WelcomeReadingOutside).replay(await recorded());
    expect(result.ok).to.equal(false);
    expect(result.cause).to.be.instanceOf(ConfigError);
    expect(result.error)
      .to.contain("workflow welcome")
      .and.contain("Mailer (constructor parameter 1)")
      .and.contain(".send")
      .and.contain("outside a step")
      .and.contain("container");
  });

  it("says a service is unknown to tsyringe, not that the build lacks decorator metadata, when an engine cannot build it", async () => {
    const engine = await TestEngine.create({ workflows: [Welcome] });
    const stopped: string[] = [];
    engine.on("event", (e) => {
      if (e.kind === "run-stopped") stopped.push(e.error.message);
    });
    try {
      await engine.start(Welcome, "w-2", "ada");
      await engine.idle();
      expect(stopped).to.have.length(1);
      expect(stopped[0])
        .to.contain("class Mailer")
        .and.contain("not registered with tsyringe")
        .and.not.contain("emitted no decorator metadata");
    } finally {
      await engine.shutdown();
    }
  });
});
