import "reflect-metadata";
import { expect } from "chai";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { PG_URL, useSchemas } from "../postgres/support/database.js";
import { type MemorySdk, memorySdk, parentOf } from "./support.js";

@Workflow("traced-remote")
class Remote {
  constructor(private readonly ctx: Ctx) {}

  async run(n: number): Promise<number> {
    const go = await this.ctx.waitFor<number>("go");
    return this.ctx.step("add", async () => n + (go ?? 0));
  }
}

describe("OpenTelemetry traces across cluster processes", function () {
  this.timeout(60_000);
  const schema = useSchemas();
  let sdk: MemorySdk;
  const engines: Engine[] = [];
  beforeEach(() => {
    sdk = memorySdk();
  });
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.shutdown().catch(() => undefined);
    await sdk.close();
  });

  const open = (name: string, owner: string): Promise<Engine> =>
    Engine.open(
      Config.postgres(PG_URL, { schema: name, owner, leaseMs: 5_000, cluster: true })
        .shards(2)
        .telemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider }),
      { workflows: [Remote] },
    );
  const named = (name: string): ReadableSpan[] => sdk.spans().filter((s) => s.name === name);

  it("puts a run started and signalled through a process that forwards the calls in the callers' traces", async () => {
    const name = schema();
    // The first process takes every shard; the second holds none and forwards each call.
    const owner = await open(name, "owner");
    engines.push(owner);
    const forwarder = await open(name, "forwarder");
    engines.push(forwarder);
    const tracer = sdk.tracerProvider.getTracer("shop");

    const checkout = await tracer.startActiveSpan("checkout", async (span) => {
      await forwarder.start(Remote, "remote-1", 40);
      span.end();
      return span.spanContext();
    });
    const approval = await tracer.startActiveSpan("approval", async (span) => {
      await forwarder.run("remote-1").signal("go", 2);
      span.end();
      return span.spanContext();
    });
    expect(await forwarder.run<number>("remote-1").result()).to.equal(42);

    const workflows = named("workflow traced-remote");
    expect(workflows.length).to.be.greaterThanOrEqual(1);
    for (const w of workflows) {
      expect(w.spanContext().traceId).to.equal(checkout.traceId);
      expect(parentOf(w)).to.equal(checkout.spanId);
    }
    const steps = named("step add");
    expect(steps).to.have.length(1);
    expect(steps[0]!.spanContext().traceId).to.equal(checkout.traceId);
    // The signal performed by the owner is a span of the caller who sent it through the forwarder.
    const signals = named("signal go").filter((s) => s.spanContext().traceId === approval.traceId);
    expect(signals.map((s) => parentOf(s))).to.include(approval.spanId);
  });
});
