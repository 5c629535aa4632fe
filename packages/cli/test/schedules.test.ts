import "reflect-metadata";
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Config, Engine, type ScheduleDescription } from "@fusee/runtime";
import { Pay } from "./fixtures/pay-workflows.js";
import { fusee } from "./support/in-process.js";

describe("fusee schedules", function () {
  this.timeout(30_000);
  let tmp: string;
  let data: string;
  let engine: Engine;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "fusee-cli-schedules-"));
    data = join(tmp, "data");
    engine = await Engine.open(Config.local(data).shards(2), { workflows: [Pay] });
    await engine.schedule("nightly-pay", { workflow: Pay, cron: "0 2 * * *", overlap: "skip", input: 5, paused: true });
    await engine.schedule("hourly-pay", { workflow: Pay, every: "1h", overlap: "buffer-one", input: 7 });
  });

  after(async () => {
    await engine.shutdown();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("lists the schedules of a running engine's directory by name, with spec and state", async () => {
    const r = await fusee("schedules", "--data", data);
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).to.match(/^NAME\s+WORKFLOW\s+WHEN\s+OVERLAP\s+STATE\s+STARTED\s+SKIPPED\s+NEXT$/);
    expect(lines[1]).to.match(/^hourly-pay\s+Pay\s+every 3600000ms\s+buffer-one\s+active\s+0\s+0\s+\d{4}-/);
    expect(lines[2]).to.match(/^nightly-pay\s+Pay\s+cron 0 2 \* \* \*\s+skip\s+paused\s+0\s+0\s+-?/);
    expect(lines).to.have.length(3);
  });

  it("prints JSON for machines, and shows a spec updated in place", async () => {
    await engine.getSchedule("hourly-pay").update({ workflow: Pay, every: "30 minutes", overlap: "skip", input: 7 });
    const r = await fusee("schedules", "--data", data, "--json");
    expect(r.code, r.stderr).to.equal(0);
    const list = JSON.parse(r.stdout) as ScheduleDescription[];
    expect(list.map((s) => [s.name, s.every, s.overlap, s.paused])).to.deep.equal([
      ["hourly-pay", 1_800_000, "skip", false],
      ["nightly-pay", undefined, "skip", true],
    ]);
  });
});
