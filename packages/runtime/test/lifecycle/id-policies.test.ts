import { expect } from "chai";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { AlreadyExistsError, RejectedError } from "../../src/core/errors.js";
import { onEachEngine } from "../runtime/harness.js";

@Workflow("w")
class Timed {
  constructor(private readonly ctx: Ctx) {}
  async run(fail: boolean): Promise<number> {
    await this.ctx.waitFor("go", { timeout: "50ms" });
    if (fail) throw new Error("no");
    return this.ctx.runId();
  }
}

@Workflow("slow")
class Slow {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<number> {
    await this.ctx.waitFor("go");
    return this.ctx.runId();
  }
}

onEachEngine("workflow ID policies", (kind) => {
  it("applies running and finished policies as documented", async () => {
    const engine = await kind().open({ workflows: [Timed, Slow] });
    const a = await engine.start(Timed, "id-1", false);
    expect(await engine.start(Timed, "id-1", false).catch((e: unknown) => e)).to.be.instanceOf(AlreadyExistsError);
    const same = await engine.start(Timed, "id-1", false, { idPolicy: { running: "use-existing" } });
    const first = await a.result();
    expect(await same.result()).to.equal(first);

    const b = await engine.start(Timed, "id-1", true);
    expect(await b.result().catch((e: unknown) => e)).to.be.instanceOf(Error);
    const onlyFailed = { running: "fail", finished: "allow-if-failed" } as const;
    const c = await engine.start(Timed, "id-1", false, { idPolicy: onlyFailed });
    expect(await c.result()).to.be.greaterThan(first);
    expect(await engine.start(Timed, "id-1", false, { idPolicy: onlyFailed }).catch((e: unknown) => e)).to.be.instanceOf(
      AlreadyExistsError,
    );
    const refused = await engine.start(Timed, "id-1", false, { idPolicy: { finished: "refuse" } }).catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(AlreadyExistsError);
    expect((refused as Error).message).to.contain("id-1");

    const old = await engine.start(Slow, "id-2", undefined);
    await engine.start(Slow, "id-2", undefined, { idPolicy: { running: "terminate-existing" } });
    await old.signal("go");
    expect(await old.result(), "the new run answers for the ID").to.equal(2);
    await engine.shutdown();
  });

  it("rejects a policy name that does not exist and starts nothing", async () => {
    const engine = await kind().open({ workflows: [Slow] });
    await engine.start(Slow, "id-3", undefined);
    const err = await engine.start(Slow, "id-3", undefined, { idPolicy: { running: "replace" as never } }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RejectedError);
    expect((err as Error).message).to.contain("'replace'");
    expect((await engine.status("id-3"))?.runId).to.equal(1);
    await engine.shutdown();
  });
});
