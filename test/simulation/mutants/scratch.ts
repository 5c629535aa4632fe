import { cpSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";

/** Top-level entries of the workspace a copy leaves out: the installed packages are linked instead. */
const LEFT_OUT = new Set(["node_modules", ".git"]);
/** The workspace's own packages: npm links them into node_modules, and the copy's must point into the copy. */
const WORKSPACE_SCOPE = "@fusee";

/**
 * A copy of the workspace, build outputs included (timestamps kept, so an incremental build
 * compiles only what a patch changes), whose `node_modules` links every installed package to the
 * workspace's but the workspace's own packages to the copy's.
 */
export function scratchCopy(workspace: string, label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `fusee-mutant-${label}-`));
  for (const entry of readdirSync(workspace)) {
    if (LEFT_OUT.has(entry)) continue;
    cpSync(join(workspace, entry), join(dir, entry), {
      recursive: true,
      preserveTimestamps: true,
      verbatimSymlinks: true,
      filter: (src) => !src.split(sep).includes("node_modules"),
    });
  }
  linkModules(join(workspace, "node_modules"), join(dir, "node_modules"));
  for (const name of readdirSync(join(dir, "node_modules", WORKSPACE_SCOPE))) {
    const target = realpathSync(join(dir, "node_modules", WORKSPACE_SCOPE, name));
    if (relative(dir, target).startsWith("..")) throw new Error(`${WORKSPACE_SCOPE}/${name} of the copy in ${dir} resolves to ${target}`);
  }
  return dir;
}

function linkModules(from: string, to: string): void {
  mkdirSync(to);
  for (const entry of readdirSync(from)) {
    if (entry !== WORKSPACE_SCOPE) {
      symlinkSync(join(from, entry), join(to, entry));
      continue;
    }
    // npm links workspace packages relatively (`../../packages/runtime`): the same link in the copy points into the copy.
    mkdirSync(join(to, entry));
    for (const name of readdirSync(join(from, entry))) symlinkSync(readlinkSync(join(from, entry, name)), join(to, entry, name));
  }
}

export function removeScratch(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
