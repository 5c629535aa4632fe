import type { DataDirRun } from "@fusee/runtime";
import { clip, toJson } from "../data-dir.js";

/** A run's search attributes on one line, or why they could not be read. */
export function attributesText(run: DataDirRun): string {
  if (run.attributesError !== undefined) return "(unreadable: pass --keys?)";
  return Object.keys(run.attributes).length === 0 ? "" : clip(toJson(run.attributes), 120);
}
