import "reflect-metadata";
import { expect } from "chai";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Config, Engine } from "@fusee/runtime";
import type { TypePatches } from "../src/patch-report.js";
import { FeeAfter, FeeBefore } from "./fixtures/fee-workflows.js";
import { Pay } from "./fixtures/pay-workflows.js";
import { fusee } from "./support/in-process.js";

async function suspended(engine: Engine, id: string): Promise<void> {
  while ((await engine.run(id).status()).status !== "suspended") await new Promise((r) => setTimeout(r, 5));
}

async function finish(engine: Engine, id: string): Promise<void> {
  await engine.run(id).signal("go");
  await engine.run(id).result();
}

async function report(data: string): Promise<TypePatches[]> {
  const r = await fusee("patches", "--data", data, "--json");
  expect(r.code, r.stdout + r.stderr).to.equal(0);
  const body = JSON.parse(r.stdout) as { ok: boolean; types: TypePatches[] };
  expect(body.ok).to.equal(true);
  return body.types;
}

describe("fusee patches", function () {
  this.timeout(30_000);
  let tmp: string;
  let data: string;
  let engine: Engine;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "fusee-patches-"));
    data = join(tmp, "data");
    // Runs started by the code before the patch: two wait past the patch point, one finishes.
    const before = await Engine.open(Config.local(data).shards(2).keepHistory(true), { workflows: [FeeBefore] });
    for (const id of ["fee-old-1", "fee-old-2", "fee-old-3"]) await before.start(FeeBefore, id, 100);
    for (const id of ["fee-old-1", "fee-old-2", "fee-old-3"]) await suspended(before, id);
    await finish(before, "fee-old-3");
    await before.shutdown();
    await new Promise((r) => setTimeout(r, 5));

    // The patched code is deployed; it keeps running while the command reads its directory.
    engine = await Engine.open(Config.local(data).shards(2).keepHistory(true), { workflows: [FeeAfter, Pay] });
    for (const id of ["fee-new-1", "fee-new-2", "fee-new-3"]) await engine.start(FeeAfter, id, 100);
    await engine.start(Pay, "pay-1", 10);
    for (const id of ["fee-new-1", "fee-new-2", "fee-new-3", "pay-1"]) await suspended(engine, id);
    await finish(engine, "fee-new-3");
  });

  after(async () => {
    await engine.shutdown();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("counts live runs holding the patch and live runs that may replay the old path", async () => {
    const r = await fusee("patches", "--data", data);
    expect(r.code, r.stderr).to.equal(0);
    const [runs, patches] = r.stdout.trim().split("\n\n");
    expect(runs?.split("\n")[0]).to.match(/^TYPE\s+LIVE\s+FINISHED\s+OLDEST LIVE STARTED$/);
    expect(runs)
      .to.match(/^Fee\s+4\s+2\s+\d{4}-/m)
      .and.match(/^Pay\s+1\s+0\s+\d{4}-/m);
    const lines = patches?.split("\n") ?? [];
    expect(lines[0]).to.match(/^TYPE\s+PATCH\s+LIVE WITH IT\s+LIVE MAYBE OLD\s+FINISHED WITH IT\s+FIRST RECORDED\s+STILL NEEDED$/);
    expect(lines.slice(1)).to.have.length(1);
    expect(lines[1]).to.match(/^Fee\s+add-fee\s+2\s+2\s+1\s+\d{4}-\S+\s+ctx\.patched\(\) and the old path$/);
  });

  it("prints the same report as JSON, naming the runs that may replay the old path", async () => {
    const types = await report(data);
    expect(types.map((t) => t.type)).to.deep.equal(["Fee", "Pay"]);
    expect(types[0]).to.deep.include({ type: "Fee", live: 4, finished: 2 });
    expect(types[0]?.patches).to.have.length(1);
    expect(types[0]?.patches[0]).to.deep.include({
      id: "add-fee",
      liveWithPatch: 2,
      liveMaybeOldPath: 2,
      maybeOldPathRuns: ["fee-old-1", "fee-old-2"],
      finishedWithPatch: 1,
      need: "patched-and-old-path",
    });
    expect(types[1]).to.deep.include({ type: "Pay", live: 1, finished: 0, patches: [] });
  });

  it("needs only deprecatePatch once the old runs finish, and nothing once the patched ones do", async () => {
    for (const id of ["fee-old-1", "fee-old-2"]) await finish(engine, id);
    expect((await report(data))[0]?.patches[0]).to.deep.include({ liveWithPatch: 2, liveMaybeOldPath: 0, need: "deprecate-patch" });
    const table = await fusee("patches", "--data", data);
    expect(table.stdout).to.match(/^Fee\s+add-fee\s+2\s+0\s+1\s+\S+\s+ctx\.deprecatePatch\(\) only$/m);

    for (const id of ["fee-new-1", "fee-new-2"]) await finish(engine, id);
    const fee = (await report(data))[0];
    expect(fee).to.deep.include({ live: 0, finished: 6 });
    expect(fee?.patches[0]).to.deep.include({ liveWithPatch: 0, liveMaybeOldPath: 0, finishedWithPatch: 3, need: "nothing" });
  });

  it("reports no runs for a data directory without any", async () => {
    const dir = join(tmp, "empty");
    const empty = await Engine.open(Config.local(dir).shards(1), { workflows: [Pay] });
    try {
      const r = await fusee("patches", "--data", dir);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout.trim()).to.equal("no runs");
      expect(await report(dir)).to.deep.equal([]);
    } finally {
      await empty.shutdown();
    }
  });

  it("exits 1 on a folder that is not a data directory, as fusee list does", async () => {
    const folder = join(tmp, "not-data");
    mkdirSync(folder);
    const r = await fusee("patches", "--data", folder);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain(folder).and.contain("manifest");
    const missing = await fusee("patches", "--data", join(tmp, "absent"), "--json");
    expect(missing.code).to.equal(1);
    expect(JSON.parse(missing.stdout))
      .to.deep.include({ ok: false })
      .and.have.nested.property("error.code")
      .that.matches(/^FUSEE_/);
  });
});
