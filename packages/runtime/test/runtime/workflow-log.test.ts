import "reflect-metadata";
import { expect } from "chai";
import type { Logger } from "../../src/core/logger.js";
import { TestEngine } from "../../src/testing/test-engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Query, Signal, Workflow } from "../../src/workflow/decorators.js";
import { localKind, type EngineKind } from "./harness.js";

interface Line {
  readonly level: string;
  readonly fields: Record<string, unknown>;
  readonly message: string | undefined;
}

/** A pino-shaped logger that keeps the lines of workflow code (engine events have an `event` field). */
function recorder(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (fields: object, message?: string): void => {
      if (!("event" in fields)) lines.push({ level, fields: fields as Record<string, unknown>, message });
    };
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

@Workflow()
class Shipment {
  private approved = false;
  constructor(private readonly ctx: Ctx) {}

  async run(orderId: string): Promise<string> {
    this.ctx.log.info("shipment started", { orderId });
    const label = await this.ctx.step("label", async () => `label-${orderId}`);
    this.ctx.log.debug("label printed", { label });
    await this.ctx.condition(() => this.approved);
    this.ctx.log.warn("approved late");
    await this.ctx.sleep("1h");
    this.ctx.log.error("shipped", { label });
    return label;
  }

  @Signal() approve(): void {
    this.approved = true;
  }

  @Query() state(): boolean {
    return this.approved;
  }
}

const said = (lines: readonly Line[]): string[] => lines.map((l) => `${l.level} ${l.message}`);

describe("ctx.log", () => {
  let kind: EngineKind;
  beforeEach(() => {
    kind = localKind();
  });
  afterEach(() => kind.cleanup());

  it("should write through the engine's logger with the run's ID, type and run ID on each line", async () => {
    const logger = recorder();
    const engine = await TestEngine.create({ workflows: [Shipment], logger });
    const run = await engine.start(Shipment, "ship-1", "o-7");
    await engine.idle();
    expect(logger.lines).to.deep.equal([
      { level: "info", fields: { orderId: "o-7", workflowId: "ship-1", workflowType: "Shipment", runId: 1 }, message: "shipment started" },
      { level: "debug", fields: { label: "label-o-7", workflowId: "ship-1", workflowType: "Shipment", runId: 1 }, message: "label printed" },
    ]);
    await run.signal("approve");
    await engine.clock.advance("1h");
    expect(await run.result()).to.equal("label-o-7");
    expect(said(logger.lines)).to.deep.equal(["info shipment started", "debug label printed", "warn approved late", "error shipped"]);
    await engine.shutdown();
  });

  it("should write nothing while a parked run replays to answer a query or take a signal", async () => {
    const logger = recorder();
    const engine = await TestEngine.create({ workflows: [Shipment], logger, cache: 1 });
    const run = await engine.start(Shipment, "ship-2", "o-8");
    await engine.idle();
    // A second run takes the only place in memory: the first is parked and replayed when needed.
    await engine.start(Shipment, "ship-other", "o-0");
    await engine.idle();
    expect((await run.status()).status).to.equal("parked");
    expect(await run.query("state")).to.equal(false);
    await run.signal("approve");
    await engine.clock.advance("1h");
    expect(await run.result()).to.equal("label-o-8");
    expect(said(logger.lines.filter((l) => l.fields.workflowId === "ship-2"))).to.deep.equal([
      "info shipment started",
      "debug label printed",
      "warn approved late",
      "error shipped",
    ]);
    await engine.shutdown();
  });

  it("should write each line once across a restart of a local engine", async () => {
    const logger = recorder();
    let engine = await kind.open({ workflows: [Shipment] }, (c) => c.logger(logger));
    await engine.start(Shipment, "ship-3", "o-9");
    await engine.idle();
    await engine.run("ship-3").signal("approve");
    await engine.idle();
    await engine.shutdown();
    expect(said(logger.lines)).to.deep.equal(["info shipment started", "debug label printed", "warn approved late"]);
    engine = await kind.reopen({ workflows: [Shipment] }, (c) => c.logger(logger));
    await engine.idle();
    await engine.run("ship-3").query("state");
    expect(said(logger.lines)).to.deep.equal(["info shipment started", "debug label printed", "warn approved late"]);
    await engine.shutdown();
  });

  it("should write to the console with the run's identity when the engine has no logger", async () => {
    const printed: unknown[][] = [];
    const [info, debug] = [console.info, console.debug];
    console.info = (...args: unknown[]) => void printed.push(["info", ...args]);
    console.debug = (...args: unknown[]) => void printed.push(["debug", ...args]);
    try {
      const engine = await TestEngine.create({ workflows: [Shipment] });
      await engine.start(Shipment, "ship-4", "o-1");
      await engine.idle();
      await engine.shutdown();
    } finally {
      [console.info, console.debug] = [info, debug];
    }
    expect(printed).to.deep.equal([
      ["info", "[Shipment ship-4 run 1] shipment started", { orderId: "o-1" }],
      ["debug", "[Shipment ship-4 run 1] label printed", { label: "label-o-1" }],
    ]);
  });
});
