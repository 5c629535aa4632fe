import "reflect-metadata";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Config, Engine } from "@fusee/runtime";
import { runCli } from "../src/cli.js";
import type { Io } from "../src/io.js";
import { Checkout } from "./checkout-workflow.js";

/**
 * How long `fusee gen --check --against DIR` takes on a data directory of many runs in flight:
 * leaves `--runs` runs of a three-step workflow waiting for a signal, then times the check in this
 * process (the static tier and the journal tier together) and the journal tier alone.
 *
 *   node packages/cli/dist/bench/journal-check.js [--runs 10000] [--json]
 */
const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const runs = Number(args.includes("--runs") ? args[args.indexOf("--runs") + 1] : 10_000);
const json = args.includes("--json");
const workspace = join(here, "../../../..");

const tmp = mkdtempSync(join(tmpdir(), "fusee-journal-bench-"));
try {
  const data = join(tmp, "data");
  const startedAt = performance.now();
  const engine = await Engine.open(Config.local(data), { workflows: [Checkout] });
  for (let i = 0; i < runs; i += 500)
    await Promise.all(Array.from({ length: Math.min(500, runs - i) }, (_, k) => engine.start(Checkout, `checkout-${i + k}`, i + k)));
  await engine.idle();
  await engine.shutdown();
  const recordedMs = performance.now() - startedAt;

  // The project whose source the static tier reads: the workflow's own source, and the runtime beside it.
  const project = join(tmp, "project");
  mkdirSync(join(project, "src"), { recursive: true });
  mkdirSync(join(project, "node_modules/@fusee"), { recursive: true });
  symlinkSync(join(workspace, "packages/runtime"), join(project, "node_modules/@fusee/runtime"), "dir");
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "bench", private: true, type: "module" }));
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        lib: ["ES2023"],
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        experimentalDecorators: true,
        skipLibCheck: true,
        noEmit: true,
        types: [],
      },
      include: ["src"],
    }),
  );
  const source = readFileSync(join(workspace, "packages/cli/bench/checkout-workflow.ts"), "utf8").replace(
    'import "reflect-metadata";\n',
    "",
  );
  writeFileSync(join(project, "src/checkout.ts"), source);
  const quiet = io(project);
  if ((await runCli(["gen", "--project", project], quiet.io)) !== 0) throw new Error(`fusee gen failed: ${quiet.err()}`);

  const check = io(project);
  const before = performance.now();
  const code = await runCli(
    ["gen", "--check", "--project", project, "--against", data, "--workflows", join(here, "checkout-workflow.js"), "--json"],
    check.io,
  );
  const totalMs = performance.now() - before;
  const result = JSON.parse(check.out()) as { journals?: { inFlight: number; failing: unknown[]; durationMs: number } };
  if (code !== 0 || result.journals?.inFlight !== runs)
    throw new Error(`the check did not replay ${runs} runs cleanly (exit ${code}): ${check.out()}${check.err()}`);
  const figures = {
    runs,
    recordedMs: Math.round(recordedMs),
    journalTierMs: Math.round(result.journals.durationMs),
    checkMs: Math.round(totalMs),
  };
  process.stdout.write(
    json
      ? `${JSON.stringify(figures)}\n`
      : `${runs} runs in flight: journal tier ${figures.journalTierMs} ms, whole check (static tier included) ${figures.checkMs} ms; recording them took ${figures.recordedMs} ms\n`,
  );
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

function io(cwd: string): { io: Io; out: () => string; err: () => string } {
  let out = "";
  let err = "";
  return {
    io: {
      stdout: { write: (text: string) => (out += text) },
      stderr: { write: (text: string) => (err += text) },
      color: false,
      cwd,
      interrupted: () => new Promise<void>(() => undefined),
    },
    out: () => out,
    err: () => err,
  };
}
