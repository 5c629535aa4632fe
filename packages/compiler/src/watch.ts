import { type FSWatcher, watch as watchFs } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { ts } from "ts-morph";
import { CONFIG_FILE, type GenerateOptions, type ResolvedConfig, resolveConfig } from "./config.js";
import { type GenerateResult, runGeneration } from "./generate.js";
import { compilerPath, Session } from "./session.js";

export interface WatchOptions extends GenerateOptions {
  /** Quiet time after the last file event before regenerating; 40 ms by default. */
  readonly debounceMs?: number;
}

/** Callbacks of {@link watch}; each generation calls exactly one of them. */
export interface WatchEvents {
  onResult?(result: GenerateResult, changed: readonly string[]): void;
  /** A generation failed (a breaking change, a source problem); watching goes on. */
  onError?(error: unknown, changed: readonly string[]): void;
}

export interface Watcher {
  /** Stops watching and waits for a generation in progress. */
  close(): Promise<void>;
  /** Resolves when the generation in progress (if any) and those already due have finished. */
  settled(): Promise<void>;
}

const SOURCE = /\.(c|m)?tsx?$/;

/**
 * Generates once, then regenerates whenever a source file, tsconfig.json or fusee.config.json
 * changes. Only the changed files are re-read into the loaded project; events arriving within the
 * debounce window are handled together. Resolves once the first generation has run.
 *
 * @example
 * const watcher = await watch({ project: "." }, { onResult: (r) => console.log(r.files), onError: console.error });
 * process.on("SIGINT", () => void watcher.close());
 */
export async function watch(options: WatchOptions, events: WatchEvents = {}): Promise<Watcher> {
  let config = resolveConfig(options);
  let session = new Session(config);
  const debounceMs = options.debounceMs ?? 40;
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let closed = false;
  let watchers: FSWatcher[] = [];

  const generation = (changed: readonly string[]) => {
    try {
      events.onResult?.(runGeneration(session, options), changed);
    } catch (e) {
      events.onError?.(e, changed);
    }
  };

  const flush = () => {
    timer = undefined;
    const changed = [...pending].sort();
    pending.clear();
    running = running.then(() => {
      if (closed) return;
      const configChanged = changed.some((p) => p === config.tsconfig || (basename(p) === CONFIG_FILE && dirname(p) === config.dir));
      if (configChanged) {
        try {
          config = resolveConfig(options);
          session = new Session(config);
          rewatch();
        } catch (e) {
          events.onError?.(e, changed);
          return;
        }
      } else if (!session.refresh(changed)) {
        return;
      }
      generation(changed);
    });
  };

  const onEvent = (dir: string) => (_event: string, name: string | Buffer | null) => {
    if (name === null || closed) return;
    const path = resolve(dir, name.toString());
    if (!isRelevant(path, config)) return;
    pending.add(path);
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(flush, debounceMs);
  };

  const rewatch = () => {
    for (const w of watchers) w.close();
    watchers = [];
    for (const [dir, recursive] of watchedDirectories(config)) {
      try {
        const w = watchFs(dir, { recursive }, onEvent(dir));
        w.on("error", (e) => events.onError?.(e, []));
        watchers.push(w);
      } catch {
        // A folder named in tsconfig.json's include that does not exist yet cannot be watched.
      }
    }
  };

  rewatch();
  generation([]);
  return {
    async close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      for (const w of watchers) w.close();
      await running;
    },
    async settled() {
      while (timer !== undefined) await new Promise((r) => setTimeout(r, debounceMs));
      await running;
    },
  };
}

/**
 * The folders to watch: those tsconfig.json's include patterns cover (recursively when the pattern
 * does), the folders of files listed by name, and the project folder for its configuration.
 */
function watchedDirectories(config: ResolvedConfig): Map<string, boolean> {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    config.tsconfig,
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  const dirs = new Map<string, boolean>([[config.dir, false]]);
  for (const [dir, flags] of Object.entries(parsed?.wildcardDirectories ?? {})) {
    const recursive = (flags & ts.WatchDirectoryFlags.Recursive) !== 0;
    // Watching the project folder itself recursively would take in node_modules; watch its folders instead.
    if (recursive && resolve(dir) === config.dir) {
      for (const child of ts.sys.getDirectories(dir)) {
        if (child !== "node_modules" && !child.startsWith(".")) dirs.set(join(dir, child), true);
      }
    } else dirs.set(resolve(dir), recursive || (dirs.get(resolve(dir)) ?? false));
  }
  for (const file of parsed?.fileNames ?? []) {
    const dir = resolve(dirname(file));
    if (![...dirs.entries()].some(([d, recursive]) => d === dir || (recursive && dir.startsWith(`${d}/`)))) dirs.set(dir, false);
  }
  return dirs;
}

function isRelevant(path: string, config: ResolvedConfig): boolean {
  if (path === config.out || path === config.workflowsOut || path === config.lock) return false;
  const name = basename(path);
  if (name.startsWith(".") || path.includes("/node_modules/")) return false;
  if (path === config.tsconfig || (name === CONFIG_FILE && dirname(path) === config.dir)) return true;
  return SOURCE.test(name) && compilerPath(path) !== compilerPath(config.out);
}
