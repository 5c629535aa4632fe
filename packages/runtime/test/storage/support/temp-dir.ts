import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** A fresh folder under the OS temp dir for each test, removed after it. Call inside a `describe`. */
export function useTempDir(prefix: string): () => string {
  let dir = "";
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), `fusee-${prefix}-`));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  return () => dir;
}
