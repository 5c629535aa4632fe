import { expect } from "chai";
import { Type } from "class-transformer";
import { Ctx } from "../../src/workflow/ctx.js";
import { Signal, Step, Update, Workflow } from "../../src/workflow/decorators.js";
import { registerType } from "../../src/workflow/payload-types.js";
import { eventually, localKind, onEachEngine } from "./harness.js";

class Money {
  constructor(
    readonly cents: number = 0,
    readonly currency: string = "EUR",
  ) {}
  format(): string {
    return `${(this.cents / 100).toFixed(2)} ${this.currency}`;
  }
}

class Order {
  id = "";
  @Type(() => Money) total: Money = new Money();
  @Type(() => Date) placedAt: Date = new Date(0);
  lines: string[] = [];
}
registerType(Order);

interface Rich {
  when: Date;
  tags: Set<string>;
  counts: Map<string, number>;
  big: bigint;
  bytes: Uint8Array;
  nothing: undefined;
  order: Order;
}

function sample(): Rich {
  const order = new Order();
  order.id = "o-1";
  order.total = new Money(1250, "EUR");
  order.placedAt = new Date(Date.UTC(2026, 5, 1));
  order.lines = ["a", "b"];
  return {
    when: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)),
    tags: new Set(["x", "y"]),
    counts: new Map([["a", 1]]),
    big: 2n ** 70n,
    bytes: new Uint8Array([1, 2, 255]),
    nothing: undefined,
    order,
  };
}

function checkRich(v: Rich): void {
  expect(v.when).to.be.instanceOf(Date);
  expect(v.when.toISOString()).to.equal("2026-01-02T03:04:05.000Z");
  expect(v.tags).to.be.instanceOf(Set);
  expect([...v.tags]).to.deep.equal(["x", "y"]);
  expect(v.counts).to.be.instanceOf(Map);
  expect(v.counts.get("a")).to.equal(1);
  expect(typeof v.big).to.equal("bigint");
  expect(v.big).to.equal(2n ** 70n);
  expect(v.bytes).to.be.instanceOf(Uint8Array);
  expect([...v.bytes]).to.deep.equal([1, 2, 255]);
  expect("nothing" in v).to.equal(true);
  expect(v.order).to.be.instanceOf(Order);
  expect(v.order.total).to.be.instanceOf(Money);
  expect(v.order.total.format()).to.equal("12.50 EUR");
  expect(v.order.placedAt).to.be.instanceOf(Date);
}

const seen: Rich[] = [];

@Workflow()
class RoundTrip {
  private fromSignal: Rich | undefined;
  private fromUpdate: Rich | undefined;
  constructor(private readonly ctx: Ctx) {}

  async run(input: Rich): Promise<Rich[]> {
    seen.push(input);
    const fromStep = await this.echo(input);
    seen.push(fromStep);
    await this.ctx.condition(() => this.fromSignal !== undefined && this.fromUpdate !== undefined);
    return [fromStep, this.fromSignal as Rich, this.fromUpdate as Rich];
  }

  @Step() async echo(v: Rich): Promise<Rich> {
    return v;
  }

  @Signal() give(v: Rich): void {
    seen.push(v);
    this.fromSignal = v;
  }

  @Update() put(v: Rich): Rich {
    seen.push(v);
    this.fromUpdate = v;
    return v;
  }
}

onEachEngine("type fidelity", (kind) => {
  beforeEach(() => {
    seen.length = 0;
  });

  it("returns inputs, step results, signal and update arguments and outputs equal in type and value", async () => {
    const engine = await kind().open({ workflows: [RoundTrip] });
    const run = await engine.start(RoundTrip, "rt-1", sample());
    await run.signal("give", sample());
    const updated = await run.update<Rich>("put", sample());
    checkRich(updated);
    const out = await run.result();
    expect(out).to.have.length(3);
    for (const v of out) checkRich(v);
    for (const v of seen) checkRich(v);
    expect(seen.length).to.equal(4);
    await engine.shutdown();
  });
});

describe("type fidelity across a restart (local)", () => {
  it("rebuilds the same types when a parked run replays from disk", async () => {
    const local = localKind();
    try {
      const first = await local.open({ workflows: [RoundTrip] });
      const run = await first.start(RoundTrip, "rt-2", sample());
      await run.signal("give", sample());
      await eventually("the condition wait", async () => (await run.status()).status === "suspended");
      await first.shutdown();
      seen.length = 0;
      const engine = await local.reopen({ workflows: [RoundTrip] });
      await engine.run("rt-2").update("put", sample());
      const out = await engine.run<Rich[]>("rt-2").result();
      for (const v of [...out, ...seen]) checkRich(v);
      expect(seen.length, "input, step result, signal replayed; update applied").to.equal(4);
      await engine.shutdown();
    } finally {
      await local.cleanup();
    }
  });
});
