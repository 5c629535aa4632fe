import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { GenConfigError } from "./errors.js";

/** Options of {@link generate} and {@link watch}. */
export interface GenerateOptions {
  /** The project folder (holding tsconfig.json and, optionally, fusee.config.json) or a tsconfig file. */
  readonly project: string;
  /** The generated client file; relative paths are taken from the project folder. */
  readonly out?: string;
  /** The generated worker type table; by default next to `out`, named `*.workflows.generated.ts`. */
  readonly workflowsOut?: string;
  /** The lock file; by default `fusee.lock.json` in the project folder. */
  readonly lock?: string;
  /** Write nothing; report whether the generated files and the lock are current and the code is compatible. */
  readonly check?: boolean;
  /** Record replay-breaking changes; only safe when no runs of the workflows concerned are in flight. */
  readonly acceptBreaking?: boolean;
}

/** Where everything lives, every path absolute. */
export interface ResolvedConfig {
  readonly dir: string;
  readonly tsconfig: string;
  readonly out: string;
  readonly workflowsOut: string;
  readonly lock: string;
  /** Patterns (tsconfig syntax, relative to `dir`) of the files workflows are read from. */
  readonly include: readonly string[];
  /** Patterns of files never read for workflows, even when `include` matches them. */
  readonly exclude: readonly string[];
}

/** The keys fusee.config.json may hold; each path is relative to the file's folder. */
interface ConfigFile {
  out?: string;
  workflowsOut?: string;
  lock?: string;
  include?: string[];
  exclude?: string[];
}

const PATH_KEYS = ["out", "workflowsOut", "lock"] as const;
const PATTERN_KEYS = ["include", "exclude"] as const;

export const CONFIG_FILE = "fusee.config.json";
export const DEFAULT_OUT = "src/fusee.generated.ts";
export const DEFAULT_LOCK = "fusee.lock.json";
/** Every file tsconfig.json includes... */
const DEFAULT_INCLUDE: readonly string[] = ["**/*"];
/** ...but test files: a workflow declared for a test is no part of the application's clients. */
const DEFAULT_EXCLUDE: readonly string[] = ["**/*.test.*", "**/*.spec.*", "**/test/**", "**/tests/**", "**/__tests__/**"];

/** Resolves the project, its tsconfig and output paths: options first, then fusee.config.json, then defaults. */
export function resolveConfig(options: GenerateOptions): ResolvedConfig {
  const project = resolve(options.project);
  if (!existsSync(project))
    throw new GenConfigError(`Project ${project} does not exist. Fix: pass --project with a folder holding tsconfig.json.`);
  const isDir = statSync(project).isDirectory();
  const dir = isDir ? project : dirname(project);
  const tsconfig = isDir ? join(project, "tsconfig.json") : project;
  if (!existsSync(tsconfig))
    throw new GenConfigError(
      `No tsconfig.json in ${dir}. Fix: pass --project with a folder holding tsconfig.json, or the path of a tsconfig file.`,
    );
  const file = readConfigFile(join(dir, CONFIG_FILE));
  const out = resolve(dir, options.out ?? file.out ?? DEFAULT_OUT);
  const workflowsOut = resolve(dir, options.workflowsOut ?? file.workflowsOut ?? defaultWorkflowsOut(out));
  const lock = resolve(dir, options.lock ?? file.lock ?? DEFAULT_LOCK);
  if (out === workflowsOut)
    throw new GenConfigError(
      `The client and the worker type table would both be written to ${out}. Fix: set "workflowsOut" in ${CONFIG_FILE} to another file.`,
    );
  for (const path of [out, workflowsOut]) {
    if (!/\.(c|m)?tsx?$/.test(path) || path.endsWith(".d.ts")) {
      throw new GenConfigError(`Generated file ${path} must be a .ts file. Fix: give it a .ts name.`);
    }
  }
  return { dir, tsconfig, out, workflowsOut, lock, include: file.include ?? DEFAULT_INCLUDE, exclude: file.exclude ?? DEFAULT_EXCLUDE };
}

function defaultWorkflowsOut(out: string): string {
  const name = basename(out);
  const match = /^(.*)\.generated\.(c|m)?ts$/.exec(name);
  return join(dirname(out), match === null ? "fusee.workflows.generated.ts" : `${match[1]}.workflows.generated.${match[2] ?? ""}ts`);
}

function readConfigFile(path: string): ConfigFile {
  if (!existsSync(path)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new GenConfigError(`${path} is not valid JSON: ${(e as Error).message}. Fix: correct it, or delete it to use the defaults.`, {
      cause: e,
    });
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new GenConfigError(`${path} must hold an object such as { "out": "${DEFAULT_OUT}" }.`);
  }
  const out: ConfigFile = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (isOneOf(key, PATTERN_KEYS)) {
      if (!Array.isArray(value) || value.some((v) => typeof v !== "string" || v === "")) {
        throw new GenConfigError(`${path}: "${key}" must be an array of file patterns such as ["src/**/*.workflow.ts"].`);
      }
      out[key] = value as string[];
    } else if (isOneOf(key, PATH_KEYS)) {
      if (typeof value !== "string" || value === "") throw new GenConfigError(`${path}: "${key}" must be a non-empty path string.`);
      out[key] = value;
    } else {
      throw new GenConfigError(
        `${path}: unknown key "${key}". Fix: use ${[...PATH_KEYS, ...PATTERN_KEYS].map((k) => `"${k}"`).join(", ")}.`,
      );
    }
  }
  return out;
}

function isOneOf<K extends string>(key: string, keys: readonly K[]): key is K {
  return (keys as readonly string[]).includes(key);
}
