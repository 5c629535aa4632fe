import { expect } from "chai";
import { LEASE_PROPERTIES, leaseViolations, type LeaseProperty } from "./lease-simulation/lease-checks.js";
import { LEASE_FIRST_SEED, LEASE_SEEDS } from "./lease-simulation/lease-seeds.js";
import { leaseSchedule, leaseScheduleText } from "./lease-simulation/lease-schedule.js";
import { runLeaseSchedule, type LeaseRun } from "./lease-simulation/lease-simulator.js";
import { useSchemas } from "./support/database.js";

describe("PostgreSQL logs sharing a schema under seeded schedules of appends, takeovers and stalled statements", function () {
  this.timeout(LEASE_SEEDS * 30_000);
  useSchemas();
  const runs: LeaseRun[] = [];

  before(async () => {
    for (let seed = LEASE_FIRST_SEED; seed < LEASE_FIRST_SEED + LEASE_SEEDS; seed++) runs.push(await runLeaseSchedule(leaseSchedule(seed)));
  });

  it(`runs ${LEASE_SEEDS} schedules without a failure of the harness itself`, () => {
    const failed = runs.flatMap((r) => (r.harnessError === undefined ? [] : [`seed ${r.schedule.seed}: ${r.harnessError}`]));
    expect(failed, failed.join("\n\n")).to.deep.equal([]);
  });

  for (const property of Object.keys(LEASE_PROPERTIES) as LeaseProperty[]) {
    it(LEASE_PROPERTIES[property], () => {
      const text = runs.flatMap((r) => {
        const found = leaseViolations(r).filter((v) => v.property === property);
        if (found.length === 0) return [];
        return [
          `seed ${r.schedule.seed}: ${found.map((v) => v.detail).join("; ")}\n${leaseScheduleText(r.schedule)}\n${r.trace.join("\n")}`,
        ];
      });
      expect(text, text.join("\n\n")).to.deep.equal([]);
    });
  }

  it("acknowledges appends, moves shards and sends statements that find the lease gone, so the checks have something to check", () => {
    expect(runs.reduce((n, r) => n + r.appends.filter((a) => a.outcome === "acked").length, 0)).to.be.greaterThan(LEASE_SEEDS);
    expect(
      runs.reduce((n, r) => n + r.takeovers, 0),
      "shards taken again at a later epoch",
    ).to.be.greaterThan(0);
    expect(
      runs.reduce((n, r) => n + r.refusedInFlight, 0),
      "batches sent under a lease that ran out while they waited",
    ).to.be.greaterThan(0);
  });

  it("generates the same schedule from the same seed", () => {
    expect(leaseSchedule(LEASE_FIRST_SEED + 3)).to.deep.equal(leaseSchedule(LEASE_FIRST_SEED + 3));
    expect(leaseSchedule(LEASE_FIRST_SEED + 3)).to.not.deep.equal(leaseSchedule(LEASE_FIRST_SEED + 4));
  });
});
