import { expect } from "chai";
import { CLUSTER_PROPERTIES, type ClusterProperty } from "./cluster-model.js";
import { ensureDatabase } from "./cluster-db.js";
import { CLUSTER_FIRST_SEED, CLUSTER_SEEDS } from "./cluster-seeds.js";
import { clusterSchedule, FULL_CLUSTER_SPACE } from "./cluster-schedule.js";
import { clusterScheduleText } from "./cluster-schedule-text.js";
import { runClusterSchedule, type ClusterReport } from "./cluster-simulator.js";

const FIRST_SEED = CLUSTER_FIRST_SEED;
const SEEDS = CLUSTER_SEEDS;

describe("a cluster of engine processes on one PostgreSQL under seeded schedules of calls and faults", function () {
  this.timeout(SEEDS * 40_000);
  const reports: ClusterReport[] = [];

  before(async () => {
    await ensureDatabase();
    for (let seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++) reports.push(await runClusterSchedule(clusterSchedule(seed)));
  });

  it(`runs ${SEEDS} schedules without a failure of the harness itself`, () => {
    const failed = reports.flatMap((r) => (r.harnessError === undefined ? [] : [`seed ${r.schedule.seed}: ${r.harnessError}`]));
    expect(failed, failed.join("\n\n")).to.deep.equal([]);
  });

  for (const property of Object.keys(CLUSTER_PROPERTIES) as ClusterProperty[]) {
    it(CLUSTER_PROPERTIES[property], () => {
      const failing = reports.filter((r) => r.violations.some((v) => v.property === property));
      const text = failing.map(
        (r) =>
          `seed ${r.schedule.seed}: ${r.violations
            .filter((v) => v.property === property)
            .map((v) => v.detail)
            .join("; ")}\n${clusterScheduleText(r.schedule)}\n${r.trace.join("\n")}`,
      );
      expect(text, text.join("\n\n")).to.deep.equal([]);
    });
  }

  it("acknowledges calls while faults move shards between processes, so the checks have something to check", () => {
    const acknowledged = reports.reduce((n, r) => n + r.acknowledged, 0);
    expect(acknowledged).to.be.greaterThan(SEEDS * 5);
    const takeovers = reports.reduce((n, r) => n + r.takeovers, 0);
    expect(takeovers, "shards written under a later epoch than their first").to.be.greaterThan(0);
    for (const what of ["relayed", "closed", "instants", "terminated", "withStart", "scheduleOps", "batches"] as const)
      expect(
        reports.reduce((n, r) => n + r.covered[what], 0),
        `${what}: relayed messages, closed children, schedule instants, terminates, with-start calls, schedule operations and batch runs are checked`,
      ).to.be.greaterThan(0);
  });

  it("generates the same schedule from the same seed", () => {
    expect(clusterSchedule(FIRST_SEED + 3, FULL_CLUSTER_SPACE)).to.deep.equal(clusterSchedule(FIRST_SEED + 3, FULL_CLUSTER_SPACE));
    expect(clusterSchedule(FIRST_SEED + 3)).to.not.deep.equal(clusterSchedule(FIRST_SEED + 4));
  });
});
