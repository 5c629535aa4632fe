import "reflect-metadata";
import { expect } from "chai";
import { cpSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync, closeSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Config, Engine } from "@fusee/runtime";
import { Pay } from "./fixtures/pay-workflows.js";
import { fusee } from "./support/in-process.js";

/** Where a cleanly closed shard's data ends, as its clean-close mark records it. */
interface ShardEnd {
  readonly dir: string;
  readonly mark: string;
  readonly segment: string;
  readonly end: number;
}

function shardEnds(data: string): ShardEnd[] {
  return readdirSync(data)
    .filter((n) => n.startsWith("shard-"))
    .map((n) => {
      const dir = join(data, n);
      const mark = readdirSync(dir).find((f) => f.startsWith("clean-"))!;
      const [, seq, end] = /^clean-(\d{12})-(\d+)$/.exec(mark)!;
      return { dir, mark, segment: join(dir, `${seq}.log`), end: Number(end) };
    });
}

function writeAt(file: string, at: number, bytes: Buffer): void {
  const fd = openSync(file, "r+");
  try {
    writeSync(fd, bytes, 0, bytes.length, at);
  } finally {
    closeSync(fd);
  }
}

describe("read-only commands on a damaged data directory", function () {
  this.timeout(30_000);
  let tmp: string;
  let template: string;
  let n = 0;
  const copy = (): string => {
    const dir = join(tmp, `copy-${n++}`);
    cpSync(template, dir, { recursive: true });
    return dir;
  };

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "fusee-cli-damage-"));
    template = join(tmp, "template");
    const engine = await Engine.open(Config.local(template).shards(1).keepHistory(true), { workflows: [Pay] });
    await engine.start(Pay, "pay-0", 10);
    await engine.start(Pay, "pay-1", 200);
    for (const id of ["pay-0", "pay-1"]) {
      while ((await engine.run(id).status()).status !== "suspended") await new Promise((r) => setTimeout(r, 5));
    }
    await engine.run("pay-0").signal("go");
    await engine.run("pay-0").result();
    await engine.shutdown();
  });

  after(() => rmSync(tmp, { recursive: true, force: true }));

  describe("with a flipped byte in a cleanly closed shard", () => {
    let data: string;
    let shard: ShardEnd;
    before(() => {
      data = copy();
      [shard] = shardEnds(data) as [ShardEnd];
      const bytes = readFileSync(shard.segment);
      bytes[shard.end - 3] = bytes[shard.end - 3]! ^ 0x20;
      writeFileSync(shard.segment, bytes);
    });

    for (const args of [["list"], ["describe", "pay-0"], ["patches"], ["ui", "--port", "0"]]) {
      it(`refuses fusee ${args[0]} with exit 1, naming shard, segment and offset`, async () => {
        const r = await fusee(...args, "--data", data);
        expect(r.code, r.stdout).to.equal(1);
        expect(r.stderr)
          .to.contain("shard 0")
          .and.contain(shard.segment)
          .and.match(/offset \d+/);
        expect(r.stdout).to.not.contain("running");
      });
    }

    it("refuses fusee export and writes no journal", async () => {
      const out = join(tmp, `out-${n++}`);
      const r = await fusee("export", "--data", data, "--out", out, "--json");
      expect(r.code).to.equal(1);
      expect(JSON.parse(r.stdout)).to.deep.include({ ok: false });
      expect(r.stdout).to.contain(shard.segment);
      expect(existsSync(out) ? readdirSync(out) : []).to.deep.equal([]);
    });
  });

  describe("with a torn last write and no writer", () => {
    let data: string;
    let shard: ShardEnd;
    before(() => {
      data = copy();
      [shard] = shardEnds(data) as [ShardEnd];
      // What a crash leaves: no clean-close mark, and half a batch after the data.
      rmSync(join(shard.dir, shard.mark));
      writeAt(shard.segment, shard.end, Buffer.from([23, 0, 0, 0, 9, 9, 9, 9, 4, 0, 0, 40]));
    });

    it("lists the runs, leaves the torn write out and says so in one line on standard error", async () => {
      const r = await fusee("list", "--data", data);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/pay-0\s+Pay\s+1\s+ok\s/);
      const lines = r.stderr.trim().split("\n");
      expect(lines).to.have.length(1);
      expect(lines[0]).to.contain("shard 0").and.contain(shard.segment).and.contain(`offset ${shard.end}`).and.contain("12 bytes");
    });

    it("reports the cut in the JSON of describe", async () => {
      const r = await fusee("describe", "pay-0", "--data", data, "--json");
      expect(r.code, r.stderr).to.equal(0);
      const out = JSON.parse(r.stdout) as { status: string; recovery: unknown[] };
      expect(out.status).to.equal("ok");
      expect(out.recovery).to.deep.equal([
        {
          kind: "recovery-cut",
          shard: 0,
          segment: shard.segment,
          offset: shard.end,
          discardedBytes: 12,
          reason: (out.recovery[0] as { reason: string }).reason,
        },
      ]);
    });

    it("changes nothing in the directory", async () => {
      const before = readFileSync(shard.segment);
      await fusee("list", "--data", data);
      expect(readFileSync(shard.segment).equals(before)).to.equal(true);
    });
  });
});
