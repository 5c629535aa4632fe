/*
 * A mutex between workflows, as Temporal's mutex sample builds it, written with fusee's messages:
 * a requester reaches the lock's workflow with signalWithStart (starting it when it does not run),
 * the lock grants it by signal, and the holder releases it by signal. No step calls an engine.
 */
import "reflect-metadata";
import { expect } from "chai";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Signal, Step, Workflow } from "../../src/workflow/decorators.js";
import { localKind, type EngineKind } from "../runtime/harness.js";

/** Grants a resource to one requester at a time, in the order they asked; a holder that goes quiet loses it. */
@Workflow()
class Mutex {
  private readonly waiting: string[] = [];
  private readonly released = new Set<string>();
  constructor(private readonly ctx: Ctx<Mutex>) {}

  async run(): Promise<never> {
    for (;;) {
      await this.ctx.condition(() => this.waiting.length > 0);
      const holder = this.waiting.shift() as string;
      const lease = this.ctx.uuid();
      await this.ctx.signalWorkflow(holder, "granted", lease);
      await this.ctx.condition(() => this.released.has(lease), { timeout: "10 minutes" });
    }
  }

  @Signal() acquire(requester: string): void {
    this.waiting.push(requester);
  }

  @Signal() release(lease: string): void {
    this.released.add(lease);
  }
}

/** When a job held the printer: the times its first and last page printed. */
interface Slot {
  readonly job: string;
  readonly from: number;
  readonly to: number;
}

/** Prints a job while it holds the printer's mutex. */
@Workflow()
class PrintJob {
  private lease: string | undefined;
  constructor(private readonly ctx: Ctx) {}

  async run(pages: number): Promise<Slot> {
    const mutex = "mutex-printer";
    await this.ctx.signalWithStart(Mutex, mutex, undefined, "acquire", this.ctx.workflowId);
    await this.ctx.condition(() => this.lease !== undefined);
    const from = await this.printPage(1);
    for (let page = 2; page <= pages; page++) {
      await this.ctx.sleep("100ms");
      await this.printPage(page);
    }
    const to = await this.printPage(0);
    await this.ctx.signalWorkflow(mutex, "release", this.lease);
    return { job: this.ctx.workflowId, from, to };
  }

  @Step() async printPage(_page: number): Promise<number> {
    return Date.now();
  }

  @Signal() granted(lease: string): void {
    this.lease = lease;
  }
}

/** Whether the slots follow one another without overlapping. */
function exclusive(slots: readonly Slot[]): boolean {
  const sorted = [...slots].sort((a, b) => a.from - b.from);
  return sorted.every((s, i) => i === 0 || (sorted[i - 1] as Slot).to <= s.from);
}

describe("a mutex workflow", () => {
  let kind: EngineKind;
  beforeEach(() => {
    kind = localKind();
  });
  afterEach(() => kind.cleanup());

  it("should let one job hold the printer at a time, in the order they asked", async () => {
    const engine = await TestEngine.create({ workflows: [Mutex, PrintJob] });
    const jobs = await Promise.all(["job-a", "job-b", "job-c"].map((id) => engine.start(PrintJob, id, 3)));
    await engine.idle();
    const results: Slot[] = [];
    const all = Promise.all(jobs.map((j) => j.result().then((s) => results.push(s))));
    while (results.length < 3) await engine.clock.advance("100ms");
    await all;
    expect(exclusive(results)).to.equal(true);
    const journal = (await engine.describe("mutex-printer"))!.journal;
    expect(journal.filter((r) => r.kind === "step" && r.name === "ctx.signalWorkflow")).to.have.length(3);
    const asked = journal.flatMap((r) => (r.kind === "start" ? [r.signal?.value] : r.kind === "signal" && r.name === "acquire" ? [r.value] : []));
    expect([...results].sort((a, b) => a.from - b.from).map((s) => s.job)).to.deep.equal(asked);
    expect((await engine.status("mutex-printer"))!.status).to.equal("suspended");
    await engine.shutdown();
  });

  it("should keep its queue and its holder across a restart", async () => {
    let engine = await kind.open({ workflows: [Mutex, PrintJob] });
    for (const id of ["job-a", "job-b", "job-c", "job-d"]) await engine.start(PrintJob, id, 4);
    // Stop while the first job holds the printer and the others wait in the mutex's queue.
    await new Promise((resolve) => setTimeout(resolve, 150));
    await engine.shutdown();
    engine = await kind.reopen({ workflows: [Mutex, PrintJob] });
    const results = await Promise.all(["job-a", "job-b", "job-c", "job-d"].map((id) => engine.run<Slot>(id).result()));
    expect(results.map((r) => r.job).sort()).to.deep.equal(["job-a", "job-b", "job-c", "job-d"]);
    expect(exclusive(results)).to.equal(true);
    const journal = (await engine.describe("mutex-printer"))!.journal;
    expect(journal.filter((r) => r.kind === "signal" && r.name === "acquire")).to.have.length(3);
    expect(journal.filter((r) => r.kind === "start")).to.have.length(1);
    expect(journal.filter((r) => r.kind === "signal" && r.name === "release")).to.have.length(4);
    await engine.shutdown();
  });
});
