import "reflect-metadata";
import { expect } from "chai";
import { SYSTEM_STREAM_PREFIX, shardOf } from "../../src/core/ids.js";
import { Batch, Config, Debounce, Engine, Workflow } from "../../src/index.js";
import { VirtualClock } from "../../src/testing/virtual-clock.js";
import { PG_URL, useSchemas } from "./support/database.js";
import { eventually } from "../support/wait.js";

const SHARDS = 2;
// A process that holds both shards gives shard 1 up (the last of those it holds) once a second one joins.
const MOVING = 1;
const LEASE_MS = 600;

@Workflow("handle-move-echo")
class Echo {
  async run(input: unknown): Promise<unknown> {
    return input;
  }
}

/**
 * A key, and a time to open its window at, such that the key's window stream of `family` and the
 * window's run (`<key><mark><time>`) are both in the moving shard. The time varies too: with two
 * shards, a name's shard is the parity of its odd characters, so one time may suit no key.
 */
function windowOnMovingShard(family: "debounce" | "batch", mark: string, from: number): { key: string; at: number } {
  for (let at = from; ; at++) {
    for (let i = 0; i < 8; i++) {
      const key = `${family}-key-${i}`;
      if (shardOf(`${SYSTEM_STREAM_PREFIX}${family}/${key}`, SHARDS) === MOVING && shardOf(`${key}${mark}${at}`, SHARDS) === MOVING)
        return { key, at };
    }
  }
}

/** An ID in the moving shard. */
function idOnMovingShard(prefix: string): string {
  for (let i = 0; ; i++) if (shardOf(`${prefix}-${i}`, SHARDS) === MOVING) return `${prefix}-${i}`;
}

/** `promise`, or a failure naming `what` when it has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe("A handle on a run not started yet, obtained through a cluster process whose shard then moves", function () {
  this.timeout(30_000);
  const schema = useSchemas();
  const engines: Engine[] = [];
  afterEach(async () => {
    for (const e of engines.splice(0).reverse()) await e.shutdown().catch(() => undefined);
  });

  /** Process A, holding both shards of a fresh schema, on `clock`; `join` opens process B beside it. */
  async function clusterOfA(clock: VirtualClock): Promise<{ a: Engine; join(): Promise<Engine> }> {
    const name = schema();
    const open = async (owner: string): Promise<Engine> => {
      const engine = await Engine.open(
        Config.postgres(PG_URL, { schema: name, owner, leaseMs: LEASE_MS, cluster: true }).shards(SHARDS).clock(clock),
        { workflows: [Echo] },
      );
      engines.push(engine);
      return engine;
    };
    const a = await open("A");
    return { a, join: () => open("B") };
  }

  /** Opens B and waits until the moving shard is B's and no longer A's. */
  async function moveShard(a: Engine, join: () => Promise<Engine>, id: string): Promise<Engine> {
    const b = await join();
    await eventually("the shard to move from A to B", () => !a.holdsRun(id) && b.holdsRun(id), 10_000);
    return b;
  }

  it("resolves started() and result() of a debounced start once the shard's next holder fires its window", async () => {
    const { key, at } = windowOnMovingShard("debounce", "@", Date.now());
    const clock = new VirtualClock(at);
    const { a, join } = await clusterOfA(clock);
    const handle = await a.debounce(Echo, key, { rev: 1 }, Debounce.of("5s"));
    expect(handle.id, "the window's run, in the moving shard").to.equal(`${key}@${at}`);
    const started = handle.started();
    const result = handle.result();

    const b = await moveShard(a, join, handle.id);
    await clock.advance("5s");
    expect(await b.run(handle.id).result(), "the run B started").to.deep.equal({ rev: 1 });
    await within(started, 10_000, "started() of the handle obtained through A");
    expect(await within(result, 10_000, "result() of the handle obtained through A")).to.deep.equal({ rev: 1 });
  });

  it("resolves started() and result() of a batch once the shard's next holder starts it", async () => {
    const { key, at } = windowOnMovingShard("batch", "#", Date.now());
    const clock = new VirtualClock(at);
    const { a, join } = await clusterOfA(clock);
    const handle = await a.batch(Echo, key, "first", Batch.of(10, "5s"));
    expect(handle.id, "the batch's run, in the moving shard").to.equal(`${key}#${at}`);
    const started = handle.started();
    const result = handle.result();

    const b = await moveShard(a, join, handle.id);
    await clock.advance("5s");
    expect(await b.run(handle.id).result(), "the run B started").to.deep.equal(["first"]);
    await within(started, 10_000, "started() of the handle obtained through A");
    expect(await within(result, 10_000, "result() of the handle obtained through A")).to.deep.equal(["first"]);
  });

  it("resolves started() of a run ID with no run yet once the shard's next holder starts a run of it", async () => {
    const clock = new VirtualClock(Date.now());
    const { a, join } = await clusterOfA(clock);
    const id = idOnMovingShard("later");
    const started = a.run(id).started();

    const b = await moveShard(a, join, id);
    await b.start(Echo, id, 7);
    await within(started, 10_000, "started() through A");
    expect(await a.run(id).result()).to.equal(7);
  });
});
