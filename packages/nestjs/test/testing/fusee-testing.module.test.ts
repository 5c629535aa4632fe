import "reflect-metadata";
import { Injectable } from "@nestjs/common";
import { Test } from "@nestjs/testing";
import { expect } from "chai";
import { Ctx, Engine, Step, Workflow } from "@fusee/runtime";
import { type TestEngine, VirtualClock } from "@fusee/runtime/testing";
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

  describe("restart and crash", () => {
    for (const how of ["restart", "crash"] as const) {
      it(`should ${how} into an engine that runs the module's workflows with the services Nest injected`, async () => {
        const moduleRef = await Test.createTestingModule({
          imports: [FuseeTestingModule.forRoot({ workflows: [Remind] })],
          providers: [Reminders],
        }).compile();
        await moduleRef.init();
        try {
          const first = moduleRef.get<TestEngine>(Engine);
          const run = await first.start(Remind, "r-1", "call mum");
          await first.idle();
          const next = await first[how]();
          expect(next).to.not.equal(first);
          // Resumed and waiting on its timer, not parked for want of its workflow type.
          await next.idle();
          expect((await next.run(run.id).status()).status).to.equal("suspended");
          await next.clock.advance("1d");
          // The step ran in the new engine, on the instance of Reminders that Nest built.
          expect(moduleRef.get(Reminders).sent).to.deep.equal(["call mum"]);
          expect(await next.run(run.id).result()).to.be.a("number");
          // And the engine after that one still has them.
          const third = await next[how]();
          expect((await third.run(run.id).status()).status).to.equal("ok");
          await third.start(Remind, "r-2", "water plants");
          await third.clock.advance("1d");
          expect(moduleRef.get(Reminders).sent).to.deep.equal(["call mum", "water plants"]);
        } finally {
          await moduleRef.close();
        }
      });
    }

    it("should shut the newest engine down when the module closes", async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [FuseeTestingModule.forRoot({ workflows: [Remind] })],
        providers: [Reminders],
      }).compile();
      await moduleRef.init();
      const next = await moduleRef.get<TestEngine>(Engine).crash();
      await moduleRef.close();
      const refused = await next.start(Remind, "r-3", "too late").then(
        () => "started",
        (e: Error) => e.message,
      );
      expect(refused).to.match(/shut down/);
    });
  });
});
