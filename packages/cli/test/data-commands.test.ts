import "reflect-metadata";
import { expect } from "chai";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { aesGcm, Config, Engine, readExport, RUN_STATUSES } from "@fusee/runtime";
import { Pay } from "./fixtures/pay-workflows.js";
import { Pay as ChangedPay } from "./fixtures/pay-changed.js";
import { fusee, inProcess, type Outcome } from "./support/in-process.js";

const here = dirname(fileURLToPath(import.meta.url));
const main = join(here, "..", "src", "main.js");
const workflows = join(here, "fixtures", "pay-workflows.js");
const changed = join(here, "fixtures", "pay-changed.js");
const throws = join(here, "fixtures", "pay-throws.js");

/** Runs `fusee ...args` as a separate process, as a user would. */
function spawnFusee(...args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(process.execPath, [main, ...args], { env: { ...process.env, NO_COLOR: "1" } }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

describe("fusee list, describe, export and replay", function () {
  this.timeout(30_000);
  let tmp: string;
  let data: string;
  let engine: Engine;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "fusee-cli-"));
    data = join(tmp, "data");
    // The engine keeps running while the commands read its directory.
    engine = await Engine.open(Config.local(data).shards(2).keepHistory(true), { workflows: [Pay] });
    await engine.start(Pay, "pay-0", 0);
    await engine.start(Pay, "pay/1", 150);
    await engine.start(Pay, "pay-2", 50);
    for (const id of ["pay-0", "pay/1", "pay-2"]) {
      const run = engine.run(id);
      while ((await run.status()).status !== "suspended") await new Promise((r) => setTimeout(r, 5));
    }
    await engine.run("pay-0").signal("go");
    await engine.run("pay-0").result();
  });

  after(async () => {
    await engine.shutdown();
    rmSync(tmp, { recursive: true, force: true });
  });

  describe("list", () => {
    it("lists the runs of a running engine's directory, newest first, with status and attributes", async () => {
      const r = await spawnFusee("list", "--data", data);
      expect(r.code, r.stderr).to.equal(0);
      const lines = r.stdout.trim().split("\n");
      expect(lines[0]).to.match(/^ID\s+TYPE\s+RUN\s+STATUS\s+STARTED\s+ENDED\s+ATTRIBUTES$/);
      expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).to.deep.equal(["pay-2", "pay/1", "pay-0"]);
      expect(r.stdout)
        .to.match(/pay-0\s+Pay\s+1\s+ok\s/)
        .and.match(/pay\/1\s+Pay\s+1\s+running\s/);
      expect(r.stdout).to.contain('{"region":"us","cents":150}');
    });

    it("filters with --where as engine.listWhere does, limits, and prints JSON", async () => {
      const r = await fusee("list", "--data", data, "--where", '{"region":"eu","status":"running"}', "--json");
      expect(r.code, r.stderr).to.equal(0);
      const runs = JSON.parse(r.stdout) as Array<{ id: string; status: string; attributes: Record<string, unknown>; records: number }>;
      expect(runs.map((x) => x.id)).to.deep.equal(["pay-2"]);
      expect(runs[0]).to.deep.include({ status: "running", attributes: { region: "eu", cents: 50 }, records: 4 });
      const limited = await fusee("list", "--data", data, "--limit", "1", "--json");
      expect((JSON.parse(limited.stdout) as unknown[]).length).to.equal(1);
      const ranged = await fusee("list", "--data", data, "--where", '{"cents":{"gte":50}}', "--json");
      expect((JSON.parse(ranged.stdout) as Array<{ id: string }>).map((x) => x.id)).to.deep.equal(["pay-2", "pay/1"]);
    });

    it("exits 2 on a bad filter and 1 on a folder that is not a data directory", async () => {
      const notJson = await fusee("list", "--data", data, "--where", "{status:");
      expect(notJson.code).to.equal(2);
      expect(notJson.stderr).to.contain("--where must be JSON");
      const badOperator = await fusee("list", "--data", data, "--where", '{"cents":{"near":3}}');
      expect(badOperator.code).to.equal(2);
      expect(badOperator.stderr).to.contain("near");
      const notData = await spawnFusee("list", "--data", tmp);
      expect(notData.code).to.equal(1);
      expect(notData.stderr).to.contain(tmp).and.contain("manifest");
    });

    it("refuses a status no run can have with exit 2, naming the statuses there are", async () => {
      for (const args of [
        ["--status", "runing"],
        ["--where", '{"status":"runing"}'],
        ["--where", '{"status":{"in":["ok","fialed"]}}'],
      ]) {
        const r = await fusee("list", "--data", data, ...args);
        expect(r.code, args.join(" ")).to.equal(2);
        expect(r.stderr, args.join(" ")).to.match(/runing|fialed/);
        for (const status of RUN_STATUSES) expect(r.stderr, args.join(" ")).to.contain(status);
      }
      const known = await fusee("list", "--data", data, "--status", "ok", "--json");
      expect((JSON.parse(known.stdout) as Array<{ id: string }>).map((x) => x.id)).to.deep.equal(["pay-0"]);
      const both = await fusee("list", "--data", data, "--status", "ok", "--where", '{"status":"failed"}');
      expect(both.code).to.equal(2);
      expect(both.stderr).to.contain("give the status once");
    });

    it("lists with --status stopped the runs an engine found unable to go on, with why", async () => {
      const dir = join(tmp, "stopped");
      const first = await Engine.open(Config.local(dir).shards(2), { workflows: [Pay] });
      await first.start(Pay, "pay-stuck", 10);
      while ((await first.run("pay-stuck").status()).status !== "suspended") await new Promise((r) => setTimeout(r, 5));
      await first.shutdown();
      // A deploy that renamed a step: the engine finds the run's journal no longer replays.
      const second = await Engine.open(Config.local(dir).shards(2), { workflows: [ChangedPay] });
      while ((await second.run("pay-stuck").status()).status !== "stopped") await new Promise((r) => setTimeout(r, 5));
      // The engine journals the stop after it answers callers; the reader sees it once it is written.
      let runs: Array<{ id: string; status: string; error?: string }> = [];
      // A count of tries is not a wait: on a loaded machine twenty reads can all come before the write.
      for (const deadline = Date.now() + 10_000; runs.length === 0 && Date.now() < deadline;) {
        const r = await fusee("list", "--data", dir, "--status", "stopped", "--json");
        expect(r.code, r.stderr).to.equal(0);
        runs = JSON.parse(r.stdout) as typeof runs;
        if (runs.length === 0) await new Promise((r) => setTimeout(r, 20));
      }
      expect(runs.map((x) => [x.id, x.status])).to.deep.equal([["pay-stuck", "stopped"]]);
      expect(runs[0]?.error).to.contain("'charge'").and.contain("'refund'");
      const table = await fusee("describe", "pay-stuck", "--data", dir);
      expect(table.stdout).to.match(/^pay-stuck\s+Pay run 1\s+stopped/);
      expect(table.stdout).to.contain("'refund'");
      await second.shutdown();
    });

    it("reports a misspelt flag as unknown, suggesting the right one, rather than as a missing --data", async () => {
      const r = await fusee("list", "--date", data);
      expect(r.code).to.equal(2);
      expect(r.stderr).to.contain("unknown option '--date'").and.contain("Did you mean --data?");
      expect(r.stderr).to.not.contain("required option");
      const missing = await fusee("list");
      expect(missing.code).to.equal(2);
      expect(missing.stderr).to.contain("required option '-d, --data <dir>' not specified");
    });
  });

  describe("describe", () => {
    it("shows a run's status and journal record by record", async () => {
      const r = await spawnFusee("describe", "pay/1", "--data", data);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/^pay\/1\s+Pay run 1\s+running/);
      expect(r.stdout).to.contain("4 records");
      expect(r.stdout).to.match(/1\s+\S+\s+step\s+seq=1 name=quote ok=true attempts=1 args=[0-9a-f]{8}\s+151/);
      expect(r.stdout).to.match(/2\s+\S+\s+step\s+seq=2 name=charge ok=true attempts=1 args=[0-9a-f]{8}\s+"receipt-151"/);
    });

    it("prints the run and its records as JSON", async () => {
      const r = await fusee("describe", "pay-0", "--data", data, "--json");
      expect(r.code, r.stderr).to.equal(0);
      const run = JSON.parse(r.stdout) as { id: string; status: string; records: Array<{ kind: string; payload?: unknown }> };
      expect(run).to.include({ id: "pay-0", status: "ok" });
      expect(run.records.map((x) => x.kind)).to.deep.equal(["start", "step", "step", "attributes", "signal", "finish"]);
      expect(run.records.at(-1)?.payload).to.deep.equal({ plain: "receipt-1" });
    });

    it("exits 1 for an unknown workflow ID", async () => {
      const r = await fusee("describe", "nobody", "--data", data);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain("'nobody'");
    });
  });

  describe("export and replay", () => {
    it("exports every run to a folder, which replays clean through the same code", async () => {
      const out = join(tmp, "journals");
      const exported = await spawnFusee("export", "--data", data, "--out", out);
      expect(exported.code, exported.stderr).to.equal(0);
      expect(exported.stdout).to.contain("exported 3 journals");
      expect(readdirSync(out).sort()).to.deep.equal(["pay%2f1.json", "pay-0.json", "pay-2.json"]);
      expect(readExport(join(out, "pay%2f1.json"))).to.include({ workflowId: "pay/1", type: "Pay", status: "running" });

      const r = await spawnFusee("replay", out, "--workflows", workflows);
      expect(r.code, r.stdout + r.stderr).to.equal(0);
      expect(r.stdout).to.match(/✔ .*pay-0\.json\s+pay-0 \(Pay run 1\)\s+finished/);
      expect(r.stdout).to.match(/✔ .*pay-2\.json\s+pay-2 \(Pay run 1\)\s+waiting at the end of its journal/);
      expect(r.stdout).to.contain("3 journals replayed against 1 workflow: 3 ok (1 finished, 2 not finished), 0 different");
    });

    it("exits 1 and names both steps when the code no longer matches a journal", async () => {
      const out = join(tmp, "one");
      const exported = await fusee("export", "--data", data, "--id", "pay-0", "--out", out, "--json");
      expect(exported.code, exported.stdout).to.equal(0);
      const written = JSON.parse(exported.stdout) as { files: Array<{ id: string; file: string }> };
      expect(written.files.map((f) => f.id)).to.deep.equal(["pay-0"]);

      const r = await spawnFusee("replay", written.files[0]!.file, "--workflows", changed);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.contain("✘").and.contain("'charge'").and.contain("'refund'").and.contain("position 2");
      expect(r.stdout).to.contain("0 ok (0 finished, 0 not finished), 1 different");

      const asJson = await fusee("replay", out, "--workflows", changed, "--json");
      expect(asJson.code).to.equal(1);
      const report = JSON.parse(asJson.stdout) as {
        ok: boolean;
        different: number;
        results: Array<{ workflowId: string; error?: string }>;
      };
      expect(report).to.include({ ok: false, different: 1 });
      expect(report.results[0]?.error).to.contain("'refund'");
    });

    it("exits 1 when the code now throws before the end of a finished journal, reporting the error", async () => {
      const out = join(tmp, "thrown");
      const exported = await fusee("export", "--data", data, "--id", "pay-0", "--out", out);
      expect(exported.code, exported.stderr).to.equal(0);
      const r = await fusee("replay", out, "--workflows", throws);
      expect(r.code, r.stdout).to.equal(1);
      expect(r.stdout).to.contain("✘").and.contain("has thrown RangeError: receipt receipt-1 is no longer accepted");
      expect(r.stdout).to.contain("0 ok (0 finished, 0 not finished), 1 different");
    });

    it("reports a malformed export file as a difference and a missing module as a usage error", async () => {
      const bad = join(tmp, "bad.json");
      writeFileSync(bad, '{"format":1}');
      const r = await fusee("replay", bad, "--workflows", workflows);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.contain(bad).and.contain("not a valid fusee journal export");
      const noModule = await fusee("replay", bad, "--workflows", join(tmp, "absent.js"));
      expect(noModule.code).to.equal(2);
      expect(noModule.stderr).to.contain("cannot import the workflow module");
      const noWorkflows = await fusee("replay", bad, "--workflows", main.replace("main.js", "exit-codes.js"));
      expect(noWorkflows.code).to.equal(2);
      expect(noWorkflows.stderr).to.contain("exports no @Workflow class");
    });
  });

  describe("progress", () => {
    it("draws a progress bar on a terminal and clears it, and none in pipes or with --json", async () => {
      const out = join(tmp, "progress");
      const exported = await inProcess(["export", "--data", data, "--out", out], true);
      expect(exported.code, exported.stderr).to.equal(0);
      expect(exported.stderr).to.contain("exporting [").and.contain("3/3");
      const replayed = await inProcess(["replay", out, "--workflows", workflows], true);
      expect(replayed.stderr).to.contain("replaying [").and.contain("3/3");
      expect(replayed.stdout).to.not.contain("replaying [");
      expect((await inProcess(["replay", out, "--workflows", workflows, "--json"], true)).stderr).to.equal("");
      expect((await fusee("replay", out, "--workflows", workflows)).stderr).to.equal("");
    });
  });

  describe("encrypted directories", () => {
    it("reads payloads with --keys, and names the key without it", async () => {
      const dir = join(tmp, "sealed");
      const key = Buffer.alloc(32, 7);
      const sealed = await Engine.open(
        Config.local(dir)
          .shards(1)
          .codec(aesGcm({ k1: key })),
        { workflows: [Pay] },
      );
      try {
        await sealed.start(Pay, "secret-1", 500);
        while ((await sealed.run("secret-1").status()).status !== "suspended") await new Promise((r) => setTimeout(r, 5));
        const keys = join(tmp, "keys.json");
        writeFileSync(keys, JSON.stringify({ k1: key.toString("base64") }));

        const listed = await fusee("list", "--data", dir, "--keys", keys, "--json");
        expect(listed.code, listed.stderr).to.equal(0);
        expect(JSON.parse(listed.stdout)).to.have.nested.property("[0].attributes.region", "us");
        const withKeys = await fusee("describe", "secret-1", "--data", dir, "--keys", keys);
        expect(withKeys.code, withKeys.stderr).to.equal(0);
        expect(withKeys.stdout).to.contain('"receipt-501"');

        const without = await fusee("describe", "secret-1", "--data", dir);
        expect(without.code).to.equal(1);
        expect(without.stderr).to.contain('"k1"').and.contain("cipher");
        const plainList = await fusee("list", "--data", dir);
        expect(plainList.code).to.equal(0);
        expect(plainList.stdout).to.contain("unreadable");
      } finally {
        await sealed.shutdown();
      }
    });
  });
});
