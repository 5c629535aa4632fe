import { expect } from "chai";
import { RejectedError } from "../../src/core/errors.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { tempDir } from "../runtime/harness.js";

@Workflow("reserved-kid")
class Kid {
  async run(): Promise<string> {
    return "kid";
  }
}

/** Tries every way workflow code names another workflow's ID with the engine's reserved prefix. */
@Workflow("reserved-caller")
class Caller {
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<string[]> {
    const refusals: string[] = [];
    const attempt = async (what: string, call: () => Promise<unknown>): Promise<void> => {
      try {
        await call();
        refusals.push(`${what}: accepted`);
      } catch (e) {
        refusals.push(`${what}: ${e instanceof RejectedError ? "refused" : String(e)}`);
      }
    };
    await attempt("startChild", () => this.ctx.startChild(Kid, "$schedule/nightly"));
    await attempt("executeChild", () => this.ctx.executeChild(Kid, "$batch/x"));
    await attempt("startWorkflow", () => this.ctx.startWorkflow(Kid, "$debounce/y"));
    await attempt("signalWorkflow", () => this.ctx.signalWorkflow("$schedule/nightly", "go"));
    await attempt("cancelWorkflow", () => this.ctx.cancelWorkflow("$schedule/nightly"));
    await attempt("updateWorkflow", () => this.ctx.updateWorkflow("$schedule/nightly", "u"));
    await attempt("signalWithStart", () => this.ctx.signalWithStart(Kid, "$z", undefined, "go"));
    return refusals;
  }
}

describe("workflow IDs in the engine's reserved namespace", () => {
  it("are refused wherever workflow code names one, and the data directory opens again afterwards", async () => {
    const dir = tempDir("reserved-ids");
    const config = Config.local(dir).shards(2);
    let engine = await Engine.open(config, { workflows: [Caller, Kid] });
    const refusals = await (await engine.start(Caller, "caller-1")).result();
    expect(refusals).to.deep.equal([
      "startChild: refused",
      "executeChild: refused",
      "startWorkflow: refused",
      "signalWorkflow: refused",
      "cancelWorkflow: refused",
      "updateWorkflow: refused",
      "signalWithStart: refused",
    ]);
    await engine.shutdown();
    engine = await Engine.open(config, { workflows: [Caller, Kid] });
    expect((await engine.status("caller-1"))?.status).to.equal("ok");
    expect(await engine.list(10)).to.have.length(1);
    await engine.shutdown();
  });

  it("are refused by every call a client makes on a run", async () => {
    const engine = await Engine.open(Config.memory(), { workflows: [Kid] });
    const refused = async (call: () => Promise<unknown>): Promise<boolean> =>
      (await call().then(
        () => null,
        (e: unknown) => e,
      )) instanceof RejectedError;
    expect(await refused(() => engine.start(Kid, "$schedule/nightly"))).to.equal(true);
    expect(await refused(() => engine.signalWithStart(Kid, "$x", undefined, "go"))).to.equal(true);
    expect(await refused(() => engine.updateWithStart(Kid, "$x", undefined, "u", 1))).to.equal(true);
    await engine.shutdown();
  });
});
