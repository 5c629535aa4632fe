import { expect } from "chai";
import { StorageError } from "../../../src/core/errors.js";
import type { Log, LogEntry } from "../../../src/storage/index.js";

/** How the contract suite gets a fresh log and a restarted one. */
export interface LogFactory {
  /** A new, empty log with `shards` shards. */
  open(shards: number): Promise<Log>;
  /** Closes `log` and opens the same data again, as a process restart would. */
  reopen(log: Log): Promise<Log>;
}

const text = new TextEncoder();
const entry = (stream: string, body: string): LogEntry => ({ stream, body: text.encode(body) });
const decode = (entries: Iterable<LogEntry>): string[] => [...entries].map((e) => `${e.stream}:${Buffer.from(e.body).toString()}`);

/** The entries `scan` yields, checked to be those `scanBatches` yields too. */
async function scanAll(log: Log, shard: number): Promise<string[]> {
  const out: LogEntry[] = [];
  for await (const e of log.scan(shard)) out.push(e);
  const batched: LogEntry[] = [];
  for await (const batch of log.scanBatches(shard)) {
    expect(batch, "an empty batch").to.not.have.length(0);
    batched.push(...batch);
  }
  expect(decode(batched), "scanBatches against scan").to.deep.equal(decode(out));
  return decode(out);
}

/** The behaviour every `Log` engine shares; call inside a `describe`. */
export function logContract(factory: LogFactory): void {
  let logs: Log[] = [];
  const open = async (shards = 2): Promise<Log> => {
    const log = await factory.open(shards);
    logs.push(log);
    return log;
  };
  const reopen = async (log: Log): Promise<Log> => {
    const again = await factory.reopen(log);
    logs.push(again);
    return again;
  };
  afterEach(async () => {
    await Promise.allSettled(logs.map((l) => l.close()));
    logs = [];
  });

  it("returns an appended entry from read and scan once the append resolved", async () => {
    const log = await open();
    await log.append(0, entry("run-1", "started"));
    expect(decode(await log.read(0, "run-1"))).to.deep.equal(["run-1:started"]);
    expect(await scanAll(log, 0)).to.deep.equal(["run-1:started"]);
    expect(log.streams(0)).to.deep.equal(["run-1"]);
  });

  it("keeps append order within a shard across streams and concurrent appends", async () => {
    const log = await open();
    await Promise.all([
      log.append(0, entry("a", "1")),
      log.append(0, entry("b", "2")),
      log.appendAll(0, [entry("a", "3"), entry("c", "4")]),
      log.append(0, entry("b", "5")),
    ]);
    expect(await scanAll(log, 0)).to.deep.equal(["a:1", "b:2", "a:3", "c:4", "b:5"]);
    expect(decode(await log.read(0, "a"))).to.deep.equal(["a:1", "a:3"]);
  });

  it("keeps shards apart", async () => {
    const log = await open(3);
    await log.append(0, entry("x", "zero"));
    await log.append(2, entry("x", "two"));
    expect(decode(await log.read(0, "x"))).to.deep.equal(["x:zero"]);
    expect(await scanAll(log, 1)).to.deep.equal([]);
    expect(await scanAll(log, 2)).to.deep.equal(["x:two"]);
    expect(log.shardCount).to.equal(3);
  });

  it("copies the body, so changing the caller's buffer afterwards changes nothing", async () => {
    const log = await open();
    const body = text.encode("original");
    const done = log.append(0, { stream: "s", body });
    body.fill(0x21);
    await done;
    expect(decode(await log.read(0, "s"))).to.deep.equal(["s:original"]);
  });

  it("drops a stream from read, scan and streams, and a later append starts it afresh", async () => {
    const log = await open();
    await log.appendAll(0, [entry("keep", "1"), entry("gone", "2"), entry("keep", "3"), entry("gone", "4")]);
    await log.drop(0, ["gone"]);
    expect(await log.read(0, "gone")).to.deep.equal([]);
    expect(log.streams(0)).to.deep.equal(["keep"]);
    expect(await scanAll(log, 0)).to.deep.equal(["keep:1", "keep:3"]);
    await log.append(0, entry("gone", "5"));
    expect(decode(await log.read(0, "gone"))).to.deep.equal(["gone:5"]);
    expect(await scanAll(log, 0)).to.deep.equal(["keep:1", "keep:3", "gone:5"]);
  });

  it("treats dropping an unknown stream as a no-op", async () => {
    const log = await open();
    await log.drop(0, ["never-written"]);
    expect(log.streams(0)).to.deep.equal([]);
  });

  it("compacts without losing or reordering a live entry", async () => {
    const log = await open();
    for (let i = 0; i < 200; i++) await log.append(1, entry(`s${i % 5}`, `${i}`));
    await log.drop(1, ["s1", "s3"]);
    const before = await scanAll(log, 1);
    const freed = await log.compact(1);
    expect(freed).to.be.at.least(0);
    expect(await scanAll(log, 1)).to.deep.equal(before);
    expect(decode(await log.read(1, "s2"))).to.deep.equal(before.filter((e) => e.startsWith("s2:")));
    expect(log.stats().liveEntries[1]).to.equal(120);
  });

  it("keeps entries, their order and drops across a close and reopen", async () => {
    let log = await open();
    await log.appendAll(0, [entry("a", "1"), entry("b", "2"), entry("a", "3")]);
    await log.append(1, entry("c", "4"));
    await log.drop(0, ["b"]);
    await log.append(0, entry("b", "5"));
    log = await reopen(log);
    expect(await scanAll(log, 0)).to.deep.equal(["a:1", "a:3", "b:5"]);
    expect(await scanAll(log, 1)).to.deep.equal(["c:4"]);
    expect(decode(await log.read(0, "b"))).to.deep.equal(["b:5"]);
    await log.append(0, entry("a", "6"));
    expect(decode(await log.read(0, "a"))).to.deep.equal(["a:1", "a:3", "a:6"]);
  });

  it("waits for pending appends on close", async () => {
    let log = await open();
    const pending = [log.append(0, entry("p", "1")), log.append(0, entry("p", "2"))];
    await log.close();
    await Promise.all(pending);
    log = await reopen(log);
    expect(decode(await log.read(0, "p"))).to.deep.equal(["p:1", "p:2"]);
  });

  it("rejects appends after close with a StorageError", async () => {
    const log = await open();
    await log.close();
    const err = await log.append(0, entry("late", "x")).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(StorageError);
  });

  it("rejects a shard that does not exist", async () => {
    const log = await open(2);
    const err = await log.append(2, entry("s", "x")).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message).to.contain("shard 2");
  });

  it("counts appended and live entries in stats", async () => {
    const log = await open();
    await log.appendAll(0, [entry("a", "1"), entry("b", "2"), entry("a", "3")]);
    await log.drop(0, ["a"]);
    const stats = log.stats();
    expect(stats.appended[0]).to.equal(3);
    expect(stats.liveEntries[0]).to.equal(1);
    expect(stats.syncs[0]).to.be.at.least(1);
    expect(stats.appended[1]).to.equal(0);
  });
}
