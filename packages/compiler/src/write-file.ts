import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** The current content of a file, or undefined when it does not exist. */
export function readIfExists(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, "utf8") : undefined;
}

/**
 * Writes a file only when its content differs, through a temporary file and a rename so readers
 * (editors, watchers, a compiler in watch mode) never see half a file. Returns whether it wrote.
 */
export function writeIfChanged(path: string, content: string): boolean {
  if (readIfExists(path) === content) return false;
  mkdirSync(dirname(path), { recursive: true });
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  writeFileSync(temporary, content);
  renameSync(temporary, path);
  return true;
}
