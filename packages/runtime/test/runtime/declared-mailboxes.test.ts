import "reflect-metadata";
import { expect } from "chai";
import { RejectedError } from "../../src/core/errors.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Signal, Workflow } from "../../src/workflow/decorators.js";
import { registerWorkflow } from "../../src/workflow/registry.js";
import { registerWorkflowTypes } from "../../src/workflow/workflow-types.js";
import { onEachEngine } from "./harness.js";

@Workflow({ signals: ["go"] })
class Gate {
  private opened = false;
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    const go = await this.ctx.waitFor<number>("go");
    await this.ctx.condition(() => this.opened);
    return `go ${go}`;
  }
  @Signal() open(): void {
    this.opened = true;
  }
}

@Workflow()
class Inbox {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<string> {
    return (await this.ctx.waitFor<string>("anything")) ?? "none";
  }
}

// As the worker type table of fusee gen declares what it found.
class Found {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<number> {
    return (await this.ctx.waitFor<number>("paid")) ?? 0;
  }
}
registerWorkflowTypes(Found, { constructorParams: [Ctx], mailboxes: ["paid"] });
registerWorkflow(Found, {});

onEachEngine("declared mailboxes", (kind) => {
  it("rejects a signal name with neither a handler nor a declared mailbox, naming both lists", async () => {
    const engine = await kind().open({ workflows: [Gate] });
    const run = await engine.start(Gate, "gate-1", undefined);
    const error = await run.signal("og", 1).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(RejectedError);
    expect((error as RejectedError).reason).to.equal("unknown-signal");
    expect((error as Error).message)
      .to.contain("workflow Gate (ID gate-1) takes no signal 'og'")
      .and.contain("'open'")
      .and.contain("'go'");
    await run.signal("go", 7);
    await run.signal("open", undefined);
    expect(await run.result()).to.equal("go 7");
    expect((await run.describe()).journal.filter((r) => r.kind === "signal")).to.have.length(2);
    await engine.shutdown();
  });

  it("refuses signalWithStart of such a name, starting nothing", async () => {
    const engine = await kind().open({ workflows: [Gate] });
    const error = await engine.signalWithStart(Gate, "gate-2", undefined, "og", 1).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(RejectedError);
    expect(await engine.status("gate-2")).to.equal(undefined);
    await engine.shutdown();
  });

  it("takes the mailbox names the worker type table registers", async () => {
    const engine = await kind().open({ workflows: [Found] });
    const run = await engine.start<number>("Found", "found-1", undefined);
    expect(await run.signal("payed", 1).catch((e: unknown) => e)).to.be.instanceOf(RejectedError);
    await run.signal("paid", 5);
    expect(await run.result()).to.equal(5);
    await engine.shutdown();
  });

  it("buffers any signal name for a workflow that declares none", async () => {
    const engine = await kind().open({ workflows: [Inbox] });
    const run = await engine.start(Inbox, "inbox-1", undefined);
    await run.signal("unrelated", "x");
    await run.signal("anything", "y");
    expect(await run.result()).to.equal("y");
    await engine.shutdown();
  });
});
