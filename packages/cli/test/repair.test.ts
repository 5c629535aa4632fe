import "reflect-metadata";
import { expect } from "chai";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Config, Engine } from "@fusee/runtime";
import { Pay } from "./fixtures/pay-workflows.js";
import { fusee } from "./support/in-process.js";

describe("fusee repair", function () {
  this.timeout(30_000);
  let tmp: string;
  let data: string;
  let segment: string;

  beforeEach(async () => {
    tmp = mkdtempSync(join(tmpdir(), "fusee-cli-repair-"));
    data = join(tmp, "data");
    const engine = await Engine.open(Config.local(data).shards(1), { workflows: [Pay] });
    for (let i = 0; i < 3; i++) await engine.start(Pay, `pay-${i}`, i);
    for (let i = 0; i < 3; i++) {
      while ((await engine.run(`pay-${i}`).status()).status !== "suspended") await new Promise((r) => setTimeout(r, 5));
    }
    await engine.shutdown();
    const folder = join(data, "shard-0000");
    segment = join(
      folder,
      readdirSync(folder)
        .filter((n) => n.endsWith(".log"))
        .sort()
        .at(-1)!,
    );
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  /** Flips a byte in the first entry of the segment, which later batches follow. */
  function corrupt(): void {
    const bytes = readFileSync(segment);
    bytes[23 + 20] = bytes[23 + 20]! ^ 0x40;
    writeFileSync(segment, bytes);
  }

  it("cuts a damaged shard, says exactly what it cut and exits 0; the read-only commands then work", async () => {
    corrupt();
    expect((await fusee("list", "--data", data)).code).to.equal(1);

    const r = await fusee("repair", "--data", data);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout)
      .to.contain("shard 0")
      .and.contain(segment)
      .and.contain("offset 0")
      .and.match(/\d+ bytes/);
    const listed = await fusee("list", "--data", data);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout).to.contain("no runs");
  });

  it("prints the cuts as JSON with --json", async () => {
    corrupt();
    const r = await fusee("repair", "--data", data, "--json");
    expect(r.code, r.stderr).to.equal(0);
    const out = JSON.parse(r.stdout) as { ok: boolean; cuts: Array<Record<string, unknown>> };
    expect(out.ok).to.equal(true);
    expect(out.cuts).to.have.length(1);
    expect(out.cuts[0]).to.include({ kind: "recovery-cut", shard: 0, segment, offset: 0 });
    expect(out.cuts[0]!["discardedBytes"]).to.be.a("number").greaterThan(0);
  });

  it("says nothing needed cutting on an intact directory, and exits 0", async () => {
    const r = await fusee("repair", "--data", data);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain("nothing needed cutting");
    expect((await fusee("list", "--data", data)).stdout).to.contain("pay-2");
  });

  it("exits 1 while an engine writes the directory, and names the process", async () => {
    const engine = await Engine.open(Config.local(data).shards(1), { workflows: [Pay] });
    try {
      const r = await fusee("repair", "--data", data);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain(`process ${process.pid}`);
    } finally {
      await engine.shutdown();
    }
  });

  it("is listed in the help with what it does", async () => {
    const r = await fusee("--help");
    expect(r.stdout).to.match(/repair \[options\]\s+Cut each damaged shard/);
  });
});
