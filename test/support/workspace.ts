import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build, type BuildOptions, type BuildResult } from "esbuild";

/** The workspace root, found from this file's place in test/dist/support. */
export const WORKSPACE = findWorkspace(dirname(fileURLToPath(import.meta.url)));

function findWorkspace(from: string): string {
  for (let dir = from; dirname(dir) !== dir; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "fusee-workspace") return dir;
  }
  throw new Error(`no fusee workspace above ${from}`);
}

/** A tool of the workspace's node_modules, run with this Node. */
export const bin = (relative: string): string => join(WORKSPACE, "node_modules", relative);

const execFileAsync = promisify(execFile);

/** Runs a command, resolving with its output; a failure carries both streams in its message. */
export async function run(
  file: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number },
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execFileAsync(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      timeout: options.timeout ?? 120_000,
      maxBuffer: 16 << 20,
    });
  } catch (e) {
    const failed = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${[file, ...args].join(" ")} failed in ${options.cwd}: ${failed.message}\n${failed.stdout ?? ""}\n${failed.stderr ?? ""}`,
      { cause: e },
    );
  }
}

/**
 * Copies a fixture app from test/fixtures into a fresh temporary folder and links the packages it
 * imports to the workspace's, as an installed app would have them (one copy of each, so
 * reflect-metadata's registry is shared).
 */
export function appFromFixture(name: string, packages: Readonly<Record<string, string>>): string {
  const dir = mkdtempSync(join(tmpdir(), `fusee-${name}-`));
  cpSync(join(WORKSPACE, "test/fixtures", name), dir, { recursive: true });
  for (const [pkg, target] of Object.entries(packages)) {
    const path = join(dir, "node_modules", pkg);
    mkdirSync(dirname(path), { recursive: true });
    symlinkSync(join(WORKSPACE, target), path, "dir");
  }
  return dir;
}

/**
 * Bundles an app's `src/main.ts` into `bundle/main.js` for Node with esbuild, its packages left to
 * `node_modules` unless `options` say otherwise; resolves with esbuild's result.
 */
export async function bundleApp(app: string, options: Partial<BuildOptions> = {}): Promise<{ outfile: string; result: BuildResult }> {
  const outfile = join(app, "bundle/main.js");
  const result = await build({
    entryPoints: [join(app, "src/main.ts")],
    absWorkingDir: app,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    outfile,
    logLevel: "silent",
    ...options,
  });
  return { outfile, result };
}
