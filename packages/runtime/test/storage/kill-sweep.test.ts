import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { LocalLog, openLocalLog } from "../../src/storage/index.js";
import { killHard, startChild } from "./support/child.js";
import { KILL_SEGMENT_BYTES, KILL_SHARDS, parseRecord, shardOf, streamOf } from "./support/kill-records.js";
import { Random } from "./support/memory-file-layer.js";
import { useTempDir } from "./support/temp-dir.js";

const WRITER = new URL("./fixtures/kill-writer.js", import.meta.url);
const KILLS = 50;
const APPENDERS = 48;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The highest acknowledged sequence number per appender; a torn last line is ignored. */
function acknowledged(ackFile: string): Map<number, number> {
  const max = new Map<number, number>();
  if (!fs.existsSync(ackFile)) return max;
  for (const line of fs.readFileSync(ackFile, "utf8").split("\n")) {
    const match = /^(\d+) (\d+)$/.exec(line);
    if (match === null) continue;
    const appender = Number(match[1]);
    max.set(appender, Math.max(max.get(appender) ?? -1, Number(match[2])));
  }
  return max;
}

/** Checks the reopened log against the acknowledgements; returns the number of records. */
async function verify(dir: string, ackFile: string): Promise<number> {
  const log = await openLocalLog({ dir, segmentBytes: KILL_SEGMENT_BYTES });
  try {
    const acked = acknowledged(ackFile);
    let total = 0;
    for (let a = 0; a < APPENDERS; a++) {
      const entries = await log.read(shardOf(a), streamOf(a));
      const seqs = entries.map((e) => parseRecord(a, e.body));
      // Every record is what was written, in order and exactly once: the sequence 0, 1, 2, ...
      expect(seqs, `appender ${a}`).to.deep.equal(seqs.map((_, i) => i));
      expect(entries.length, `acknowledged records of appender ${a}`).to.be.greaterThan(acked.get(a) ?? -1);
      total += entries.length;
    }
    let scanned = 0;
    for (let shard = 0; shard < KILL_SHARDS; shard++) {
      const last = new Map<string, number>();
      for await (const e of log.scan(shard)) {
        const appender = Number(e.stream.slice("appender-".length));
        const seq = parseRecord(appender, e.body);
        expect(seq, `record of ${e.stream} in scan`).to.equal((last.get(e.stream) ?? -1) + 1);
        last.set(e.stream, seq!);
        scanned += 1;
      }
    }
    expect(scanned).to.equal(total);
    return total;
  } finally {
    await log.close();
  }
}

describe(`${LocalLog.name} killed with SIGKILL`, function () {
  this.timeout(120_000);
  const tmp = useTempDir("kill");

  it(`keeps every acknowledged record, in order and exactly once, through ${KILLS} kills at random moments`, async () => {
    const dir = path.join(tmp(), "data");
    const ackFile = path.join(tmp(), "acks.txt");
    const rng = new Random(0x5eed);
    let records = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      const child = startChild(WRITER, [dir, ackFile, String(APPENDERS)]);
      if (kill % 4 === 3) {
        // Sometimes die during start-up, while recovery may be cutting a torn tail.
        await sleep(rng.int(30, 120));
      } else {
        await child.ready;
        await sleep(rng.int(20, 150));
      }
      await killHard(child);
      const now = await verify(dir, ackFile);
      expect(now).to.be.at.least(records);
      records = now;
    }
    expect(records, "records written across all runs").to.be.greaterThan(KILLS * 20);
  });
});
