import { expect } from "chai";
import type { CallRecord } from "../../src/journal/records.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { type CallRecordKind, WORKFLOW_CALLS, type WorkflowCallDescriptor } from "../../src/workflow/call-table.js";
import { memoryKind } from "./harness.js";

// The build fails when Ctx gains a public member the table does not describe, or when the table's
// record kinds and the journal's numbered call records part ways.
const EVERY_MEMBER: Readonly<Record<keyof Ctx, WorkflowCallDescriptor>> = WORKFLOW_CALLS;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const RECORD_KINDS_AGREE: Same<CallRecordKind, CallRecord["kind"]> = true;

@Workflow("call-table-child")
class Child {
  async run(): Promise<string> {
    return "done";
  }
}

/** One call of each member that journals a numbered call, in the table's order. */
@Workflow({ name: "call-table-calls", patches: ["p1"] })
class Calls {
  constructor(private readonly ctx: Ctx) {}
  async run(): Promise<void> {
    await this.ctx.step("inline", async () => 1);
    await this.ctx.sleep("1ms");
    await this.ctx.sleepUntil(this.ctx.now() + 1);
    await this.ctx.waitFor("never", { timeout: "1ms" });
    await this.ctx.condition(() => false, { timeout: "1ms" });
    this.ctx.patched("p1");
    this.ctx.setAttributes({ a: 1 });
    this.ctx.removeAttributes("a");
    await this.ctx.startChild(Child, "call-table-c1");
    await this.ctx.executeChild(Child, "call-table-c2");
    await this.ctx.signalWorkflow("call-table-c1", "poke").catch(() => undefined);
  }
}

describe("the call table", () => {
  it("names only members a Ctx has", () => {
    const ctx = new Ctx({} as ConstructorParameters<typeof Ctx>[0]);
    expect(Object.keys(EVERY_MEMBER).filter((name) => !(name in ctx))).to.deep.equal([]);
    expect(RECORD_KINDS_AGREE).to.equal(true);
  });

  it("says which numbered call record each journaling call writes, as the executor writes it", async () => {
    const kind = memoryKind();
    const engine = await kind.open({ workflows: [Calls, Child] });
    try {
      const run = await engine.start(Calls, "call-table-1", undefined);
      await run.result();
      const journal = (await run.describe()).journal;
      const called: (keyof typeof WORKFLOW_CALLS)[] = [
        "step",
        "sleep",
        "sleepUntil",
        "waitFor",
        "condition",
        "patched",
        "setAttributes",
        "removeAttributes",
        "startChild",
        "executeChild",
        "signalWorkflow",
      ];
      const numbered = new Set<string>(Object.values(WORKFLOW_CALLS).flatMap((c) => ("record" in c ? [c.record] : [])));
      expect(journal.filter((r) => numbered.has(r.kind)).map((r) => r.kind)).to.deep.equal(
        called.map((name) => (WORKFLOW_CALLS[name] as WorkflowCallDescriptor).record),
      );
    } finally {
      await engine.shutdown();
    }
  });
});
