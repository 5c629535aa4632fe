import { expect } from "chai";
import { type FlushMethod, LocalLog, type LocalLogOptions, openLocalLog } from "../../src/storage/index.js";
import { MemoryFileLayer, Random } from "./support/memory-file-layer.js";

const CRASH_POINTS = 250;
const DIR = "/data";

/** What the workload had been told before the power went out. */
interface Appender {
  readonly stream: string;
  readonly shard: number;
  next: number;
  /** Highest sequence number acknowledged. */
  acked: number;
  /** Boundaries of every drop issued: entries below it were dropped. */
  readonly drops: number[];
  /** Boundary of the last drop acknowledged. */
  ackedDrop: number;
}

const bodyOf = (stream: string, seq: number): Uint8Array => new TextEncoder().encode(`${stream}#${seq}#${"x".repeat(seq % 37)}`);

function seqOf(stream: string, body: Uint8Array): number {
  const text = Buffer.from(body).toString();
  const seq = Number(text.split("#")[1]);
  expect(Buffer.from(bodyOf(stream, seq)).equals(Buffer.from(body)), `body of ${stream}: ${text}`).to.equal(true);
  return seq;
}

/** Checks the recovered log: per stream a gap-free run that starts at a drop and holds every ack. */
async function verify(log: LocalLog, appenders: readonly Appender[], context: string): Promise<void> {
  const shards = log.shardCount;
  for (const a of appenders) {
    const seqs = (await log.read(a.shard, a.stream)).map((e) => seqOf(a.stream, e.body));
    const starts = [0, ...a.drops].filter((s) => s >= a.ackedDrop);
    const where = `${context}, ${a.stream}: ${JSON.stringify(seqs.slice(0, 3))}…, acked ${a.acked}, drops ${a.drops}`;
    if (seqs.length === 0) {
      expect(a.acked < Math.max(...starts), where).to.equal(true);
      continue;
    }
    expect(seqs, where).to.deep.equal(seqs.map((_, i) => seqs[0]! + i));
    expect(starts, where).to.include(seqs[0]);
    if (a.acked >= seqs[0]!) expect(seqs.at(-1), where).to.be.at.least(a.acked);
  }
  for (let shard = 0; shard < shards; shard++) {
    const byStream = new Map<string, number[]>();
    for await (const e of log.scan(shard)) {
      const list = byStream.get(e.stream) ?? [];
      list.push(seqOf(e.stream, e.body));
      byStream.set(e.stream, list);
    }
    for (const a of appenders.filter((x) => x.shard === shard)) {
      const read = (await log.read(shard, a.stream)).map((e) => seqOf(a.stream, e.body));
      expect(byStream.get(a.stream) ?? [], `${context}: scan of ${a.stream}`).to.deep.equal(read);
    }
  }
}

async function crashOnce(seed: number): Promise<void> {
  const rng = new Random(seed * 7919 + 1);
  const disk = new MemoryFileLayer();
  disk.mkdirDurable(DIR);
  const flush = (["fdatasync", "fsync", "dsync"] as const)[seed % 3] as FlushMethod;
  // One shard with one appender flushes inline; more of either exercise batches and parallel syncs.
  const shards = 1 + (seed % 2);
  const appenderCount = 1 + ((seed >> 1) % 6);
  const options: LocalLogOptions = {
    dir: DIR,
    shards,
    segmentBytes: 4096,
    preallocate: seed % 2 === 0,
    flush,
    fileLayer: disk,
  };
  const context = `crash point ${seed} (${flush}, preallocate ${options.preallocate}, ${shards} shards, ${appenderCount} appenders)`;
  const log = await openLocalLog(options);
  const appenders: Appender[] = Array.from({ length: appenderCount }, (_, i) => ({
    stream: `s${i}`,
    shard: i % shards,
    next: 0,
    acked: -1,
    drops: [],
    ackedDrop: 0,
  }));
  let image: MemoryFileLayer | undefined;
  let told: Appender[] = [];
  const crashAt = disk.ops + rng.int(1, 500);
  disk.onOp = (n) => {
    if (n === crashAt) {
      image = disk.crashImage(rng);
      told = appenders.map((a) => ({ ...a, drops: [...a.drops] }));
    }
  };

  const work = async (a: Appender): Promise<void> => {
    for (let step = 0; step < 150 && image === undefined; step++) {
      const roll = rng.next();
      if (roll < 0.06) {
        const boundary = a.next;
        a.drops.push(boundary);
        await log.drop(a.shard, [a.stream]);
        a.ackedDrop = Math.max(a.ackedDrop, boundary);
      } else if (roll < 0.09) {
        await log.compact(a.shard);
      } else {
        const seq = a.next++;
        await log.append(a.shard, { stream: a.stream, body: bodyOf(a.stream, seq) });
        a.acked = Math.max(a.acked, seq);
      }
    }
  };
  await Promise.allSettled(appenders.map(work));
  await log.close().catch(() => undefined);
  if (image === undefined) {
    image = disk.crashImage(rng);
    told = appenders;
  }

  // A second power loss while recovery repairs the first one must be just as harmless.
  let second: MemoryFileLayer | undefined;
  const secondAt = image.ops + rng.int(1, 60);
  const first = image;
  first.onOp = (n) => {
    if (n === secondAt && rng.next() < 0.5) second = first.crashImage(rng);
  };
  const recovered = await openLocalLog({ ...options, fileLayer: first });
  first.onOp = undefined;
  await verify(recovered, told, context);
  const seen = new Map<string, number[]>();
  for (const a of told) {
    const seqs = (await recovered.read(a.shard, a.stream)).map((e) => seqOf(a.stream, e.body));
    const next = seqs.length === 0 ? a.next : seqs.at(-1)! + 1;
    await recovered.append(a.shard, { stream: a.stream, body: bodyOf(a.stream, next) });
    seen.set(a.stream, [...seqs, next]);
  }
  await recovered.close();

  // Appends after recovery land right after the recovered entries, and nothing stale resurfaces.
  const reopened = await openLocalLog({ ...options, fileLayer: first });
  expect(reopened.recovery, `${context}: reopen after recovery`).to.deep.equal([]);
  for (const a of told) {
    const seqs = (await reopened.read(a.shard, a.stream)).map((e) => seqOf(a.stream, e.body));
    expect(seqs, `${context}, reopened, ${a.stream}`).to.deep.equal(seen.get(a.stream));
  }
  await reopened.close();

  if (second !== undefined) {
    const again = await openLocalLog({ ...options, fileLayer: second });
    await verify(again, told, `${context}, crash during recovery`);
    await again.close();
  }
}

describe(`${LocalLog.name} after a power loss`, function () {
  this.timeout(90_000);

  it(`recovers a clean prefix holding every acknowledged record at ${CRASH_POINTS} simulated crash points`, async () => {
    for (let seed = 0; seed < CRASH_POINTS; seed++) await crashOnce(seed);
  });
});
