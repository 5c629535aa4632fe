import { createRequire } from "node:module";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import * as bundledRuntime from "@fusee/runtime";
import type { WorkflowClass } from "@fusee/runtime";
import { UsageError } from "./data-dir.js";
import type { Io } from "./io.js";

/** The parts of @fusee/runtime the commands that load workflow code use, from the copy that code imports. */
export type Runtime = Pick<typeof bundledRuntime, "Replayer" | "EXPORT_FILE_SUFFIX" | "Engine" | "Config" | "DataDirReader" | "readExport">;

/**
 * Imports the workflow modules and collects their exported workflow classes. The `Replayer` comes
 * from the copy of @fusee/runtime the first module resolves, so its decorators and the replayer
 * share one registry and one tsyringe.
 */
export async function loadWorkflows(io: Io, modules: readonly string[]): Promise<{ runtime: Runtime; classes: WorkflowClass[] }> {
  let runtime: Runtime | undefined;
  const classes: WorkflowClass[] = [];
  for (const spec of modules) {
    const file = resolve(io.cwd, spec);
    runtime ??= await runtimeFor(file);
    let loaded: Record<string, unknown>;
    try {
      loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (e) {
      throw new UsageError(`cannot import the workflow module ${file}: ${(e as Error)?.message ?? String(e)}`);
    }
    const found = Object.values(loaded).filter((value): value is WorkflowClass => isWorkflow(runtime as Runtime, value));
    if (found.length === 0) throw new UsageError(`the module ${file} exports no @Workflow class`);
    for (const cls of found) if (!classes.includes(cls)) classes.push(cls);
  }
  if (runtime === undefined) throw new UsageError("--workflows names no module");
  return { runtime, classes };
}

/** The @fusee/runtime that `file` imports, or the one bundled with the command line. */
async function runtimeFor(file: string): Promise<Runtime> {
  let resolved: string;
  try {
    resolved = createRequire(file).resolve("@fusee/runtime");
  } catch {
    return bundledRuntime;
  }
  return (await import(pathToFileURL(resolved).href)) as Runtime;
}

function isWorkflow(runtime: Runtime, value: unknown): boolean {
  if (typeof value !== "function") return false;
  try {
    new runtime.Replayer().register(value as WorkflowClass);
    return true;
  } catch {
    return false;
  }
}
