import "reflect-metadata";
import { Injectable } from "@nestjs/common";
import { Test } from "@nestjs/testing";
import { expect } from "chai";
import { Ctx, Engine, Step, Workflow } from "@fusee/runtime";
import { VirtualClock } from "@fusee/runtime/testing";
import { FuseeTestingModule } from "../../src/testing/index.js";
import { Greet, GreetClient, GreetingService, PUNCTUATION } from "../fixtures/greeting.js";

@Injectable()
class Reminders {
  readonly sent: string[] = [];
  send(text: string): void {
    this.sent.push(text);
  }
}

/** Sends a reminder after a day. */
@Workflow()
class Remind {
  constructor(
    private readonly ctx: Ctx,
    private readonly reminders: Reminders,
  ) {}

  async run(text: string): Promise<number> {
    await this.ctx.sleep("1d");
    await this.send(text);
    return this.ctx.now();
  }

  @Step() async send(text: string): Promise<void> {
    this.reminders.send(text);
  }
}

describe("FuseeTestingModule", () => {
  describe("forRoot", () => {
    it("should run the module's workflows on a test engine whose virtual clock is injectable", async () => {
      const start = Date.UTC(2031, 4, 1);
      const moduleRef = await Test.createTestingModule({
        imports: [FuseeTestingModule.forRoot({ workflows: [Remind], startTime: start })],
        providers: [Reminders],
      }).compile();
      await moduleRef.init();
      try {
        const clock = moduleRef.get(VirtualClock);
        const run = await moduleRef.get(Engine).start(Remind, "r-1", "call mum");
        await clock.advance("23h");
        expect(moduleRef.get(Reminders).sent).to.deep.equal([]);
        await clock.advance("1h");
        expect(moduleRef.get(Reminders).sent).to.deep.equal(["call mum"]);
        expect(await run.result()).to.equal(start + 24 * 3600_000);
      } finally {
        await moduleRef.close();
      }
    });

    it("should provide the clients and let providers be overridden as in any testing module", async () => {
      @Injectable()
      class QuietGreetings {
        greet(name: string): string {
          return `hi ${name}`;
        }
      }
      const moduleRef = await Test.createTestingModule({
        imports: [FuseeTestingModule.forRoot({ workflows: [Greet], clients: [GreetClient] })],
        providers: [GreetingService, { provide: PUNCTUATION, useValue: "." }],
      })
        .overrideProvider(GreetingService)
        .useClass(QuietGreetings)
        .compile();
      await moduleRef.init();
      try {
        const run = await moduleRef.get(GreetClient).start("g-1", "ada");
        await run.signal("go");
        expect(await run.result()).to.equal("hi ada.");
      } finally {
        await moduleRef.close();
      }
    });
  });
});
