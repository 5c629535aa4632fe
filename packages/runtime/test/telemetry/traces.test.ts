import "reflect-metadata";
import { expect } from "chai";
import fs from "node:fs";
import { SpanStatusCode, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { RunTelemetry } from "../../src/engine/run-telemetry.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Query, Step, Update, Workflow } from "../../src/workflow/decorators.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { eventually, tempDir } from "../runtime/harness.js";
import { type MemorySdk, memorySdk, parentOf } from "./support.js";

let chargeFailures = 0;

@Workflow("traced-order")
class Order {
  constructor(private readonly ctx: Ctx) {}

  async run(cents: number): Promise<string> {
    const hold = await this.reserve(cents);
    const go = await this.ctx.waitFor<string>("go");
    return `${hold}/${await this.charge(cents)}/${go ?? ""}`;
  }

  @Step() async reserve(cents: number): Promise<string> {
    return `hold-${cents}`;
  }

  @Step({ retry: RetryPolicy.exponential(3, "1ms", "5ms") })
  async charge(cents: number): Promise<string> {
    if (chargeFailures-- > 0) throw new Error("card declined");
    return `paid-${cents}`;
  }
}

@Workflow("traced-child")
class Child {
  constructor(private readonly ctx: Ctx) {}
  async run(n: number): Promise<number> {
    return this.ctx.step("double", async () => n * 2);
  }
}

@Workflow("traced-parent")
class Parent {
  private items: string[] = [];
  constructor(private readonly ctx: Ctx) {}

  async run(): Promise<number> {
    await this.ctx.sleep("5ms");
    const doubled = await this.ctx.executeChild<number>("traced-child", "traced-child-1", 21, {});
    await this.ctx.condition(() => this.items.length > 0);
    return doubled;
  }

  @Update() async add(item: string): Promise<number> {
    this.items.push(item);
    return this.items.length;
  }

  @Query() list(): string[] {
    return this.items;
  }
}

describe("OpenTelemetry traces", function () {
  this.timeout(30_000);
  let sdk: MemorySdk;
  let dir: string;
  beforeEach(() => {
    sdk = memorySdk();
    dir = tempDir("traces");
    chargeFailures = 0;
  });
  afterEach(async () => {
    await sdk.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const config = (): Config =>
    Config.local(dir).shards(2).telemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider });
  const named = (name: string): ReadableSpan[] => sdk.spans().filter((s) => s.name === name);

  it("shows a run that crossed a restart as one trace under the caller's span, without spans for replayed steps", async () => {
    chargeFailures = 1;
    const first = await Engine.open(config(), { workflows: [Order] });
    const tracer = sdk.tracerProvider.getTracer("shop");
    const checkout = await tracer.startActiveSpan("checkout", async (span) => {
      await first.start(Order, "order-1", 700);
      span.end();
      return span.spanContext();
    });
    await eventually("the wait for 'go'", async () => (await first.status("order-1"))?.status === "suspended");
    await first.shutdown();

    const second = await Engine.open(config(), { workflows: [Order] });
    try {
      await second.run("order-1").signal("go", "now");
      expect(await second.run<string>("order-1").result()).to.equal("hold-700/paid-700/now");
    } finally {
      await second.shutdown();
    }

    // The signal was sent outside any span: it is the root of a trace of its own.
    const spans = sdk.spans().filter((s) => s.name !== "checkout" && s.name !== "signal go");
    expect(spans.map((s) => s.spanContext().traceId)).to.satisfy((ids: string[]) => ids.every((id) => id === checkout.traceId));
    const workflows = named("workflow traced-order");
    expect(workflows.length).to.be.greaterThanOrEqual(2, "one span per process that executed the run");
    for (const w of workflows) {
      expect(parentOf(w)).to.equal(checkout.spanId);
      expect(w.attributes).to.include({ "fusee.workflow.id": "order-1", "fusee.workflow.type": "traced-order", "fusee.run.id": 1 });
    }
    const workflowIds = new Set(workflows.map((w) => w.spanContext().spanId));
    expect(named("step reserve")).to.have.length(1, "the step replayed after the restart made no span");
    const charges = named("step charge").sort(
      (a, b) => (a.attributes["fusee.step.attempt"] as number) - (b.attributes["fusee.step.attempt"] as number),
    );
    expect(charges.map((s) => s.attributes["fusee.step.attempt"])).to.deep.equal([1, 2]);
    expect(charges[0]!.status.code).to.equal(SpanStatusCode.ERROR);
    expect(charges[0]!.events.map((e) => e.name)).to.include("exception");
    expect(charges[1]!.status.code).to.not.equal(SpanStatusCode.ERROR);
    expect(charges[1]!.attributes).to.include({
      "fusee.workflow.id": "order-1",
      "fusee.workflow.type": "traced-order",
      "fusee.run.id": 1,
      "fusee.step.name": "charge",
    });
    for (const step of [...named("step reserve"), ...charges]) expect(workflowIds.has(parentOf(step)!)).to.equal(true);
    expect(named("signal go")).to.have.length(1);
    expect(parentOf(named("signal go")[0]!)).to.equal(undefined);
  });

  it("makes the step's span active in its code, so the calls it makes join the trace", async () => {
    let inside: string | undefined;
    const engine = await Engine.open(config(), { workflows: [] });
    @Workflow("traced-inside")
    class Inside {
      constructor(private readonly ctx: Ctx) {}
      async run(): Promise<void> {
        await this.ctx.step("look", async () => {
          inside = trace.getActiveSpan()?.spanContext().spanId;
        });
      }
    }
    engine.register(Inside);
    await (await engine.start(Inside, "inside-1", undefined)).result();
    await engine.shutdown();
    expect(inside).to.equal(named("step look")[0]!.spanContext().spanId);
  });

  it("traces timers fired, children started, updates and queries in the run's trace", async () => {
    const engine = await Engine.open(config(), { workflows: [Parent, Child] });
    const tracer = sdk.tracerProvider.getTracer("shop");
    const root = await tracer.startActiveSpan("request", async (span) => {
      const run = await engine.start(Parent, "traced-parent-1", undefined);
      await eventually("the child", async () => (await engine.status("traced-child-1"))?.status === "ok");
      await run.update("add", "apple");
      expect(await run.query("list")).to.deep.equal(["apple"]);
      expect(await run.result()).to.equal(42);
      span.end();
      return span.spanContext();
    });
    await engine.shutdown();

    for (const name of [
      "timer fired",
      "child started",
      "update add",
      "query list",
      "workflow traced-parent",
      "workflow traced-child",
      "step double",
    ]) {
      expect(named(name), name).to.not.have.length(0);
      for (const s of named(name)) expect(s.spanContext().traceId, name).to.equal(root.traceId);
    }
    expect(named("child started")[0]!.attributes["fusee.child.id"]).to.equal("traced-child-1");
    const parentRun = named("workflow traced-parent").map((s) => s.spanContext().spanId);
    expect(named("workflow traced-child").some((c) => parentRun.includes(parentOf(c)!))).to.equal(
      true,
      "the child's run hangs under its parent's",
    );
  });

  it("records nothing, and loads no tracer, with telemetry(false)", async () => {
    trace.setGlobalTracerProvider(sdk.tracerProvider);
    const engine = await Engine.open(Config.memory().telemetry(false), { workflows: [Order] });
    await sdk.tracerProvider.getTracer("shop").startActiveSpan("checkout", async (span) => {
      const run = await engine.start(Order, "order-off", 1);
      await run.signal("go", "x");
      await run.result();
      span.end();
    });
    await engine.shutdown();
    expect(sdk.spans().map((s) => s.name)).to.deep.equal(["checkout"]);
  });

  it("sets up nothing at all when no provider is given and no SDK is registered", async () => {
    const otel = await import("@opentelemetry/api");
    const gauges = { liveRuns: () => 0, parkedRuns: () => 0, waitingPermits: () => new Map<string, number>() };
    expect(RunTelemetry.create(otel, {}, gauges)).to.equal(undefined);
    expect(RunTelemetry.create(otel, { tracerProvider: sdk.tracerProvider }, gauges)).to.be.instanceOf(RunTelemetry);
    trace.setGlobalTracerProvider(sdk.tracerProvider);
    expect(RunTelemetry.create(otel, {}, gauges)).to.be.instanceOf(RunTelemetry);
  });

  it("records through the global tracer provider when none is given", async () => {
    trace.setGlobalTracerProvider(sdk.tracerProvider);
    const engine = await Engine.open(Config.memory(), { workflows: [Order] });
    const run = await engine.start(Order, "order-global", 2);
    await run.signal("go", "y");
    await run.result();
    await engine.shutdown();
    expect(named("step reserve")).to.have.length(1);
    expect(named("step charge")).to.have.length(1);
  });
});
