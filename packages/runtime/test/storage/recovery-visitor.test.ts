import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import fc from "fast-check";
import { nodeFileLayer } from "../../src/storage/file-layer.js";
import { type LocalLog, type LogEntry, type RecoveryVisitor, openLocalLog } from "../../src/storage/index.js";
import { writeFormat1Dir } from "./fixtures/format-1-dir.js";
import { useTempDir } from "./support/temp-dir.js";

/** Keeps what a visitor was told as the live entries per shard: drops take out what came before. */
class Collector implements RecoveryVisitor {
  readonly shards: LogEntry[][] = [];

  entry(shard: number, stream: string, body: Uint8Array): void {
    (this.shards[shard] ??= []).push({ stream, body: Uint8Array.from(body) });
  }

  dropped(shard: number, stream: string): void {
    this.shards[shard] = (this.shards[shard] ?? []).filter((e) => e.stream !== stream);
  }
}

async function scanned(log: LocalLog): Promise<LogEntry[][]> {
  const out: LogEntry[][] = [];
  for (let shard = 0; shard < log.shardCount; shard++) {
    const entries: LogEntry[] = [];
    for await (const e of log.scan(shard)) entries.push({ stream: e.stream, body: Uint8Array.from(e.body) });
    out.push(entries);
  }
  return out;
}

/** What the visitor was told, as the same shape as a scan: every shard present. */
function told(c: Collector, shards: number): LogEntry[][] {
  return Array.from({ length: shards }, (_, i) => c.shards[i] ?? []);
}

type Op =
  | { readonly kind: "append"; readonly entries: readonly { stream: number; bytes: number }[] }
  | { readonly kind: "drop"; readonly stream: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("append" as const),
      entries: fc.array(fc.record({ stream: fc.integer({ min: 0, max: 5 }), bytes: fc.integer({ min: 1, max: 1500 }) }), {
        minLength: 1,
        maxLength: 6,
      }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("drop" as const), stream: fc.integer({ min: 0, max: 5 }) }) },
);

function body(stream: number, n: number, bytes: number): Uint8Array {
  const b = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) b[i] = (stream * 31 + n * 7 + i) & 0xff;
  return b;
}

function dropMarks(dir: string): void {
  for (const shard of fs.readdirSync(dir).filter((n) => n.startsWith("shard-"))) {
    for (const name of fs.readdirSync(path.join(dir, shard))) if (name.startsWith("clean-")) fs.unlinkSync(path.join(dir, shard, name));
  }
}

function segmentsOf(dir: string, shard: number): string[] {
  const folder = path.join(dir, `shard-${String(shard).padStart(4, "0")}`);
  return fs
    .readdirSync(folder)
    .filter((n) => /^\d{12}\.log$/.test(n))
    .sort()
    .map((n) => path.join(folder, n));
}

function dataEnd(file: string): number {
  const buf = fs.readFileSync(file);
  let end = buf.length;
  while (end > 0 && buf[end - 1] === 0) end--;
  return end;
}

describe("recovery visitor of a local log", function () {
  this.timeout(300_000);
  const tmp = useTempDir("visitor");

  it("is told exactly the entries a scan yields, after torn tails, repairs and drops", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 40 }),
        fc.constantFrom("clean", "torn", "damaged"),
        fc.integer({ min: 0, max: 9_999 }),
        fc.integer({ min: 0, max: 9_999 }),
        async (ops, ending, segPick, atPick) => {
          const dir = path.join(tmp(), `case-${n++}`);
          const log = await openLocalLog({ dir, shards: 2, segmentBytes: 8192, flush: "none" });
          let written = 0;
          for (const o of ops) {
            if (o.kind === "append") {
              const shard = o.entries[0]!.stream % 2;
              await log.appendAll(
                shard,
                o.entries
                  .filter((e) => e.stream % 2 === shard)
                  .map((e) => ({ stream: `s${e.stream}`, body: body(e.stream, written++, e.bytes) })),
              );
            } else await log.drop(o.stream % 2, [`s${o.stream}`]);
          }
          await log.close();
          let repair = false;
          if (ending !== "clean") {
            dropMarks(dir);
            const shard = segPick % 2;
            const segments = segmentsOf(dir, shard);
            const file = ending === "torn" ? segments.at(-1)! : segments[Math.floor((segPick / 10_000) * segments.length)]!;
            const at = Math.floor((dataEnd(file) * atPick) / 10_000);
            if (ending === "torn") fs.truncateSync(file, at);
            else {
              const bytes = fs.readFileSync(file);
              if (at < bytes.length) {
                bytes[at] = bytes[at]! ^ 0x41;
                fs.writeFileSync(file, bytes);
                repair = true;
              }
            }
          }
          // A reader first, which cuts nothing, then the writer's open, which cuts.
          for (const readOnly of [true, false]) {
            const collector = new Collector();
            let reopened: LocalLog;
            try {
              reopened = await openLocalLog({ dir, visitor: collector, flush: "none", ...(readOnly ? { readOnly } : { repair }) });
            } catch (e) {
              // Damage a reader cannot read around is refused with or without a visitor.
              expect(readOnly && repair, (e as Error).message).to.equal(true);
              continue;
            }
            try {
              expect(told(collector, 2)).to.deep.equal(await scanned(reopened));
            } finally {
              await reopened.close();
            }
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("hands over whole batches larger than recovery's read window intact", async () => {
    const dir = tmp();
    const log = await openLocalLog({ dir, shards: 1, flush: "none", segmentBytes: 64 * 1024 * 1024 });
    // Bodies of 1.5 MiB, in batches of three, cross the 4 MiB windows recovery reads through.
    const big = (i: number): Uint8Array => Buffer.alloc(1536 * 1024, i + 1);
    for (let b = 0; b < 4; b++)
      await log.appendAll(
        0,
        [0, 1, 2].map((i) => ({ stream: `big-${b}`, body: big(b * 3 + i) })),
      );
    await log.close();
    const collector = new Collector();
    const reopened = await openLocalLog({ dir, visitor: collector });
    try {
      expect(collector.shards[0]!.map((e) => [e.stream, e.body.length, e.body[0], e.body.at(-1)])).to.deep.equal(
        Array.from({ length: 12 }, (_, i) => [`big-${Math.floor(i / 3)}`, 1536 * 1024, i + 1, i + 1]),
      );
      expect(told(collector, 1)).to.deep.equal(await scanned(reopened));
    } finally {
      await reopened.close();
    }
  });

  it("is told the frames of a format-1 segment, a torn frame left out, as a scan yields them", async () => {
    const dir = path.join(tmp(), "data");
    const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
    writeFormat1Dir(nodeFileLayer, dir, [
      {
        segments: [
          [
            { stream: "a", body: bytes("a1") },
            { stream: "b", body: bytes("b1") },
          ],
          [
            { stream: "a", drop: true },
            { stream: "a", body: bytes("a2") },
            { stream: "c", body: bytes("c1") },
          ],
        ],
        tornTail: Uint8Array.from([40, 0, 0, 0, 1, 2, 3]),
      },
    ]);
    const collector = new Collector();
    const log = await openLocalLog({ dir, visitor: collector });
    try {
      const seen = collector.shards[0]!.map((e) => `${e.stream}:${new TextDecoder().decode(e.body)}`);
      expect(seen).to.deep.equal(["b:b1", "a:a2", "c:c1"]);
      expect(told(collector, 1)).to.deep.equal(await scanned(log));
      expect(log.recovery.map((e) => e.kind)).to.deep.equal(["torn-tail"]);
    } finally {
      await log.close();
    }
  });
});
