import { expect } from "chai";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempDir } from "./harness.js";

const worker = fileURLToPath(new URL("./fixtures/kill-worker.js", import.meta.url));
const WORKFLOWS = 500;
const KILLS = 20;
/** How long a worker may run without running a step before it counts as stuck. */
const STUCK_MS = 60_000;

function runWorker(dir: string, logFile: string, generation: number, finish: boolean, killAfterMs?: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [worker, dir, logFile, String(generation), String(WORKFLOWS), finish ? "finish" : "work"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    let timer: NodeJS.Timeout | undefined;
    // A worker that has unfinished runs and runs none of their steps is stuck: said as such, not left to the suite's timeout.
    let stuck = false;
    const watchdog =
      killAfterMs === undefined
        ? undefined
        : setTimeout(() => {
            stuck = true;
            child.kill("SIGKILL");
          }, STUCK_MS);
    // The kill clock starts once steps run, so every kill lands in the middle of work.
    child.stdout.once("data", () => {
      clearTimeout(watchdog);
      if (killAfterMs !== undefined) timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (timer) clearTimeout(timer);
      clearTimeout(watchdog);
      if (stuck) reject(new Error(`worker ${generation} ran no step within ${STUCK_MS} ms of starting: ${stderr}`));
      else if (signal !== "SIGKILL" && code !== 0) reject(new Error(`worker ${generation} exited ${code}: ${stderr}`));
      else resolve(code);
    });
  });
}

describe("kill sweep (local, real processes)", function () {
  this.timeout(180_000);

  it(`completes ${WORKFLOWS} five-step workflows across ${KILLS} SIGKILLs without re-running an acknowledged step`, async () => {
    const dir = tempDir("kill");
    const logFile = join(dir, "..", `${dir.split("/").pop()}-steps.log`);
    try {
      for (let generation = 1; generation <= KILLS; generation++) {
        await runWorker(join(dir, "data"), logFile, generation, false, 20 + Math.floor(Math.random() * 130));
      }
      await runWorker(join(dir, "data"), logFile, KILLS + 1, true);

      const summary = JSON.parse(readFileSync(`${logFile}.summary`, "utf8")) as { results: number[]; statuses: string[] };
      expect(
        summary.statuses.every((s) => s === "ok"),
        "every workflow completed",
      ).to.equal(true);
      expect(new Set(summary.results)).to.deep.equal(new Set([15]));

      const acked = new Map<string, number>();
      const violations: string[] = [];
      const lines = readFileSync(logFile, "utf8").split("\n").filter(Boolean);
      for (const l of lines) {
        const [kind, id, step, gen] = l.split(" ") as [string, string, string, string];
        const key = `${id} ${step}`;
        if (kind === "ack" && !acked.has(key)) acked.set(key, Number(gen));
        if (kind === "exec" && acked.has(key) && Number(gen) > (acked.get(key) as number)) violations.push(l);
      }
      expect(acked.size).to.equal(WORKFLOWS * 5);
      expect(violations, "steps acknowledged before a kill ran again").to.deep.equal([]);
      const kills = new Set(lines.map((l) => l.split(" ")[3])).size;
      expect(kills, "workers that got to run steps").to.be.greaterThan(KILLS / 4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      for (const f of [logFile, `${logFile}.summary`]) if (existsSync(f)) rmSync(f);
    }
  });
});
