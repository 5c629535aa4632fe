import "reflect-metadata";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Config } from "../src/engine/config.js";
import { Engine } from "../src/engine/engine.js";
import { round } from "./percentile.js";

const ROUNDS = 7;

/** Bytes the files under `root` hold on disk: allocated blocks, not apparent sizes. */
function allocated(root: string): number {
  let bytes = 0;
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) bytes += statSync(join(entry.parentPath, entry.name)).blocks * 512;
  }
  return bytes;
}

/**
 * `npm run bench -- first-open [--json]`: what a newcomer's first `Engine.open` of a fresh data
 * directory costs with the default configuration: the time to open it (and to open it again), and
 * the disk it takes before any run starts.
 */
export async function runFirstOpenBench(args: readonly string[]): Promise<void> {
  const json = args.includes("--json");
  const first: number[] = [];
  const again: number[] = [];
  let disk = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const root = mkdtempSync(join(tmpdir(), "fusee-first-open-"));
    const dir = join(root, "data");
    try {
      let began = performance.now();
      let engine = await Engine.open(Config.local(dir).telemetry(false));
      first.push(performance.now() - began);
      await engine.shutdown();
      disk = allocated(dir);
      began = performance.now();
      engine = await Engine.open(Config.local(dir).telemetry(false));
      again.push(performance.now() - began);
      await engine.shutdown();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  const result = {
    shards: Config.local("x").settings.shards,
    first_open_ms_median: round(median(first)),
    first_open_ms_max: round(Math.max(...first)),
    open_again_ms_median: round(median(again)),
    disk_bytes: disk,
  };
  process.stdout.write(
    json
      ? `${JSON.stringify(result)}\n`
      : `${Object.entries(result)
          .map(([k, v]) => `${k}: ${v}`)
          .join("\n")}\n`,
  );
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}
