import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { type FlushMethod, type LocalLogOptions, openLocalLog } from "../../src/storage/index.js";
import { MemoryFileLayer, Random } from "./support/memory-file-layer.js";

/* Bursts of many appenders with entries of several KiB: batches of hundreds of KiB. */
const DIR = "/data";
const APPENDERS = 24;
const BODY_BYTES = 7000;
const STEPS = 12;
const CRASH_POINTS = 60;

const bodyOf = (stream: string, seq: number): Uint8Array => {
  const b = Buffer.alloc(BODY_BYTES, seq % 251);
  b.write(`${stream}#${seq}#`);
  return b;
};

const seqOf = (stream: string, body: Uint8Array): number => {
  const seq = Number(Buffer.from(body).toString("latin1").split("#")[1]);
  expect(Buffer.from(bodyOf(stream, seq)).equals(Buffer.from(body)), `body of ${stream} #${seq}`).to.equal(true);
  return seq;
};

function freshDisk(): MemoryFileLayer {
  const disk = new MemoryFileLayer();
  disk.mkdirDurable(DIR);
  return disk;
}

async function crashOnce(seed: number): Promise<void> {
  const rng = new Random(seed * 104_729 + 7);
  const disk = freshDisk();
  const flush = (["fdatasync", "fsync", "dsync"] as const)[seed % 3] as FlushMethod;
  const options: LocalLogOptions = { dir: DIR, shards: 1 + (seed % 2), segmentBytes: 256 * 1024, flush, fileLayer: disk };
  const context = `crash point ${seed} (${flush}, ${options.shards} shards)`;
  const log = await openLocalLog(options);
  const acked = new Array<number>(APPENDERS).fill(-1);
  let told: number[] | undefined;
  let image: MemoryFileLayer | undefined;
  const crashAt = disk.ops + rng.int(1, 120);
  disk.onOp = (n) => {
    if (n === crashAt) {
      image = disk.crashImage(rng);
      told = [...acked];
    }
  };
  await Promise.allSettled(
    Array.from({ length: APPENDERS }, async (_, i) => {
      for (let seq = 0; seq < STEPS && image === undefined; seq++) {
        await log.append(i % options.shards!, { stream: `s${i}`, body: bodyOf(`s${i}`, seq) });
        acked[i] = seq;
      }
    }),
  );
  await log.close().catch(() => undefined);
  image ??= disk.crashImage(rng);
  told ??= acked;

  const recovered = await openLocalLog({ ...options, fileLayer: image });
  for (let i = 0; i < APPENDERS; i++) {
    const seqs = (await recovered.read(i % options.shards!, `s${i}`)).map((e) => seqOf(`s${i}`, e.body));
    expect(seqs, `${context}, s${i}`).to.deep.equal(seqs.map((_, k) => k));
    expect(seqs.length, `${context}, s${i} acknowledged up to ${told[i]}`).to.be.at.least(told[i]! + 1);
  }
  await recovered.close();
}

describe("a local log under bursts of large entries", function () {
  this.timeout(90_000);

  it(`recovers a clean prefix holding every acknowledged record at ${CRASH_POINTS} simulated crash points`, async () => {
    for (let seed = 0; seed < CRASH_POINTS; seed++) await crashOnce(seed);
  });

  it("tells no appender of a failed write during its own call, and fails the shard", async () => {
    const disk = freshDisk();
    const log = await openLocalLog({ dir: DIR, shards: 1, fileLayer: disk });
    disk.failNextWrite = true;
    const heard: string[] = [];
    let calling = false;
    const promises: Promise<void>[] = [];
    for (let i = 0; i < APPENDERS; i++) {
      calling = true;
      log.appendThen(0, `t${i}`, bodyOf(`t${i}`, 0), {
        appended: () => heard.push(`t${i} durable`),
        failed: (e) => heard.push(`t${i} ${calling ? "during its call" : "later"}: ${e instanceof StorageError}`),
      });
      calling = false;
      promises.push(log.append(0, { stream: `s${i}`, body: bodyOf(`s${i}`, 0) }));
    }
    const outcomes = await Promise.allSettled(promises);
    expect(outcomes.every((o) => o.status === "rejected" && o.reason instanceof StorageError)).to.equal(true);
    expect(heard).to.deep.equal(Array.from({ length: APPENDERS }, (_, i) => `t${i} later: true`));
    await log.append(0, { stream: "after", body: bodyOf("after", 0) }).then(
      () => expect.fail("an append after the failure was acknowledged"),
      (e) => expect(e).to.be.instanceOf(StorageError),
    );
    await log.close();
  });
});
