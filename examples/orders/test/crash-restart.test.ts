import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";

const MAIN = fileURLToPath(new URL("../src/main.js", import.meta.url));
const ORDERS = Array.from({ length: 20 }, (_, i) => `order-${i + 1}`);

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the example as a child process on `dataDir`. With `stopWhen`, sends `signal` as soon as the
 * output so far satisfies it.
 */
function runExample(dataDir: string, stop?: { when: (stdout: string) => boolean; signal: NodeJS.Signals }): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN], { env: { ...process.env, FUSEE_DATA: dataDir }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let sent = false;
    const guard = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (stop !== undefined && !sent && stop.when(stdout)) {
        sent = true;
        child.kill(stop.signal);
      }
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Orders the output reports shipped: lines like `order-7   ✓ shipped TRK0S9JJQE · $17.00`. */
const shippedIn = (stdout: string): number => stdout.split("\n").filter((l) => /^order-\d+ +✓ shipped /.test(l)).length;

interface LedgerLine {
  readonly key: string;
  readonly kind?: string;
  readonly orderId: string;
  readonly purpose?: string;
  readonly cents?: number;
}

function readLedger(dataDir: string, file: string): LedgerLine[] {
  return readFileSync(join(dataDir, "services", file), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as LedgerLine);
}

/** Every order charged exactly once for itself, at most once for extras, and shipped exactly once. */
function expectEachOrderChargedAndShippedOnce(dataDir: string): void {
  const payments = readLedger(dataDir, "payments.jsonl");
  const shipments = readLedger(dataDir, "shipments.jsonl");
  for (const id of ORDERS) {
    const charges = payments.filter((p) => p.orderId === id && p.kind === "charge");
    expect(
      charges.filter((c) => c.purpose === "order"),
      `order charges of ${id}`,
    ).to.have.length(1);
    expect(charges.filter((c) => c.purpose === "extras").length, `extras charges of ${id}`).to.be.at.most(1);
    expect(
      shipments.filter((s) => s.orderId === id),
      `shipments of ${id}`,
    ).to.have.length(1);
  }
  expect(new Set(payments.map((p) => p.key)).size, "distinct payment keys").to.equal(payments.length);
}

describe("the orders example (main.js)", function () {
  this.timeout(60_000);
  let dataDir: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "orders-e2e-"));
  });

  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("carries on after being killed mid-batch, without redoing finished orders or charging twice", async () => {
    const killed = await runExample(dataDir, { when: (out) => shippedIn(out) >= 3, signal: "SIGKILL" });
    expect(killed.signal, killed.stderr).to.equal("SIGKILL");
    const shippedBeforeKill = shippedIn(killed.stdout);
    expect(shippedBeforeKill).to.be.within(3, 19);

    const resumed = await runExample(dataDir);
    expect(resumed.code, resumed.stdout + resumed.stderr).to.equal(0);
    const counts = /20 orders · (\d+) finished earlier · (\d+) resumed · (\d+) new/.exec(resumed.stdout);
    expect(counts, resumed.stdout).to.not.equal(null);
    const [, earlier, carriedOn, fresh] = (counts ?? []).map(Number);
    expect(earlier).to.be.at.least(shippedBeforeKill);
    expect((earlier ?? 0) + (carriedOn ?? 0) + (fresh ?? 0)).to.equal(20);
    expect(carriedOn).to.be.greaterThan(0);
    expect(shippedIn(resumed.stdout)).to.equal(20 - (earlier ?? 0));
    expect(resumed.stdout).to.contain("20 ok, 0 failed");
    expect(resumed.stdout).to.contain("no order charged twice");
    expectEachOrderChargedAndShippedOnce(dataDir);

    const payments = readLedger(dataDir, "payments.jsonl").length;
    const again = await runExample(dataDir);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout).to.contain("20 finished earlier · 0 resumed · 0 new");
    expect(readLedger(dataDir, "payments.jsonl")).to.have.length(payments);
  });

  it("shuts down on Ctrl-C with exit code 130 and finishes the batch when started again", async () => {
    const stopped = await runExample(dataDir, { when: (out) => out.includes("packed"), signal: "SIGINT" });
    expect(stopped.code, stopped.stderr).to.equal(130);
    expect(stopped.stdout).to.contain("stopped; run again");
    expect(stopped.stdout).to.not.contain("20 ok");

    const resumed = await runExample(dataDir);
    expect(resumed.code, resumed.stdout + resumed.stderr).to.equal(0);
    expect(resumed.stdout).to.match(/20 orders · \d+ finished earlier · [1-9]\d* resumed · 0 new/);
    expect(resumed.stdout).to.contain("20 ok, 0 failed");
    expectEachOrderChargedAndShippedOnce(dataDir);
  });
});
