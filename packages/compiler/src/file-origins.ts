import type { ts } from "ts-morph";

/**
 * Which source files belong to dependencies (reached through node_modules) and which to the project.
 * ts-morph makes every file it has loaded a root of the next program, and the compiler never counts
 * a root as an external library; so each file is judged by the first program that read it, where it
 * was still reached through an import, and that judgement is kept for the life of the project.
 */
export class FileOrigins {
  private readonly external = new Map<string, boolean>();

  /** Records the files this program read for the first time. */
  observe(program: ts.Program): void {
    for (const file of program.getSourceFiles()) {
      if (!this.external.has(file.fileName)) this.external.set(file.fileName, program.isSourceFileFromExternalLibrary(file));
    }
  }

  /** Whether a file comes from a dependency; call {@link observe} with its program first. */
  isExternal(file: ts.SourceFile): boolean {
    return this.external.get(file.fileName) ?? false;
  }
}
