import "reflect-metadata";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Config } from "../../src/engine/config.js";
import { Engine, type EngineOptions } from "../../src/engine/engine.js";
export { eventually } from "../support/wait.js";

/** A fresh temporary folder; `cleanup` removes it. */
export function tempDir(label: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), `fusee-replay-${label}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The configuration the replay suites run the engine with: real files, two shards, journals kept. */
export function localConfig(dir: string): Config {
  return Config.local(dir).shards(2).keepHistory(true);
}

export function openLocal(dir: string, options: EngineOptions, configure: (c: Config) => Config = (c) => c): Promise<Engine> {
  return Engine.open(configure(localConfig(dir)), options);
}

/** Every file under `dir`, recursively. */
export function walk(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...walk(path));
    else out.push(path);
  }
  return out;
}

/** `file holds NEEDLE` for every needle found anywhere in the bytes of any file under `dir`. */
export function leaks(dir: string, needles: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of walk(dir)) {
    const bytes = readFileSync(file);
    for (const needle of needles) {
      if (bytes.includes(Buffer.from(needle, "utf8"))) found.push(`${file} holds ${needle}`);
      if (bytes.includes(Buffer.from(needle, "utf16le"))) found.push(`${file} holds ${needle} (UTF-16)`);
    }
  }
  return found;
}
