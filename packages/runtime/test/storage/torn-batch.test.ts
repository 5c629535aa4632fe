import { expect } from "chai";
import { type LocalLogOptions, openLocalLog } from "../../src/storage/index.js";
import { MemoryFileLayer, Random } from "./support/memory-file-layer.js";

const DIR = "/data";
const SEGMENT = `${DIR}/shard-0000/000000000001.log`;
const PAGE = 4096;

const record = (i: number): Uint8Array => new TextEncoder().encode(`record-${i}-${"x".repeat(60)}`);
const text = (b: Uint8Array): string => Buffer.from(b).toString();

/**
 * Appends one record at a time until the segment's data ends shortly before the first page
 * boundary, then a batch of ten records that crosses it, and takes the power away while that
 * batch's sync is under way, with only the pages `landed` names written.
 */
async function crashInBatchAcrossPages(
  landed: (page: number) => boolean,
): Promise<{ image: MemoryFileLayer; options: LocalLogOptions; acked: number }> {
  const disk = new MemoryFileLayer();
  disk.mkdirDurable(DIR);
  const options: LocalLogOptions = { dir: DIR, shards: 1, segmentBytes: 64 * 1024, fileLayer: disk };
  const log = await openLocalLog(options);
  let acked = 0;
  while (log.stats().bytes[0]! < PAGE - 300) await log.append(0, { stream: "s", body: record(acked++) });
  let image: MemoryFileLayer | undefined;
  const writeAt = disk.ops + 1;
  disk.onOp = (n) => {
    // The batch is one write (op writeAt) and one sync (the op after it), taken before it persists.
    if (n === writeAt + 1) image = disk.crashImage(new Random(1), (file, page) => (file === SEGMENT && landed(page) ? "new" : "old"));
  };
  await log.appendAll(
    0,
    Array.from({ length: 10 }, (_, i) => ({ stream: "s", body: record(acked + i) })),
  );
  disk.onOp = undefined;
  await log.close();
  expect(image, "the crash happened during the batch's sync").to.not.equal(undefined);
  return { image: image!, options: { ...options, fileLayer: image! }, acked };
}

describe("a power loss during the sync of a batch that spans a page boundary", () => {
  it("cuts the whole batch when only its later page reached the disk, and reports the cut", async () => {
    const { options, acked } = await crashInBatchAcrossPages((page) => page === 1);
    const log = await openLocalLog(options);
    const kept = (await log.read(0, "s")).map((e) => text(e.body));
    expect(kept).to.deep.equal(Array.from({ length: acked }, (_, i) => text(record(i))));
    expect(log.recovery).to.have.length(1);
    expect(log.recovery[0]).to.include({ kind: "torn-tail", shard: 0, segment: SEGMENT });
    expect(log.recovery[0]!.offset).to.be.below(PAGE);
    await log.append(0, { stream: "s", body: record(acked) });
    await log.close();

    const again = await openLocalLog(options);
    expect(again.recovery).to.deep.equal([]);
    expect((await again.read(0, "s")).map((e) => text(e.body))).to.deep.equal(Array.from({ length: acked + 1 }, (_, i) => text(record(i))));
    await again.close();
  });

  it("cuts the whole batch when only its first page reached the disk", async () => {
    const { options, acked } = await crashInBatchAcrossPages((page) => page === 0);
    const log = await openLocalLog(options);
    expect((await log.read(0, "s")).length).to.equal(acked);
    expect(log.recovery.map((e) => e.kind)).to.deep.equal(["torn-tail"]);
    await log.close();
  });

  it("keeps the whole batch when both pages reached the disk", async () => {
    const { options, acked } = await crashInBatchAcrossPages(() => true);
    const log = await openLocalLog(options);
    expect((await log.read(0, "s")).length).to.equal(acked + 10);
    expect(log.recovery).to.deep.equal([]);
    await log.close();
  });
});
