import { ts } from "ts-morph";
import type { ResolvedConfig } from "./config.js";

/**
 * The files `fusee gen` reads workflows from: those fusee.config.json's `include` and `exclude`
 * select, matched as tsconfig.json matches its own (of which only the files tsconfig.json includes
 * are ever read). Compiler spelling: absolute, forward slashes.
 */
export function genSourceFiles(config: ResolvedConfig): Set<string> {
  const parsed = ts.parseJsonConfigFileContent(
    { include: config.include, exclude: config.exclude, compilerOptions: { allowJs: false } },
    ts.sys,
    config.dir,
  );
  return new Set(parsed.fileNames.map((f) => f.replace(/\\/g, "/")));
}
