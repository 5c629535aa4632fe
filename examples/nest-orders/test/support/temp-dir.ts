import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A fresh directory under the system's temporary folder, and a way to remove it. */
export function tempDir(label: string): { readonly path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `fusee-nest-orders-${label}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
