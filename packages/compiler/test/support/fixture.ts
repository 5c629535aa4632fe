import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The workspace root, found from this file's place in packages/compiler/dist/test/support. */
export const WORKSPACE = findWorkspace(dirname(fileURLToPath(import.meta.url)));

function findWorkspace(from: string): string {
  for (let dir = from; dirname(dir) !== dir; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "fusee-workspace") return dir;
  }
  throw new Error(`no fusee workspace above ${from}`);
}

/** The compiler options fixture projects use: what a fusee user has, without the DOM library. */
export const FIXTURE_COMPILER_OPTIONS = {
  target: "ES2022",
  lib: ["ES2023"],
  module: "NodeNext",
  moduleResolution: "NodeNext",
  strict: true,
  noUncheckedIndexedAccess: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  skipLibCheck: true,
  noEmit: true,
  types: ["node"],
  typeRoots: [join(WORKSPACE, "node_modules/@types")],
};

/**
 * A throwaway TypeScript project in a temporary folder, whose node_modules links to the workspace's
 * runtime package (and the libraries its declarations name), as an installed project would have it.
 */
export class Fixture {
  private constructor(readonly dir: string) {}

  static create(files: Readonly<Record<string, string>>, compilerOptions: Record<string, unknown> = {}): Fixture {
    const dir = mkdtempSync(join(tmpdir(), "fusee-gen-"));
    const fixture = new Fixture(dir);
    fixture.write("package.json", `${JSON.stringify({ name: "fixture", private: true, type: "module" }, null, 2)}\n`);
    fixture.write(
      "tsconfig.json",
      `${JSON.stringify({ compilerOptions: { ...FIXTURE_COMPILER_OPTIONS, ...compilerOptions }, include: ["src"] }, null, 2)}\n`,
    );
    link(join(WORKSPACE, "packages/runtime"), join(dir, "node_modules/@fusee/runtime"));
    for (const lib of ["tsyringe", "reflect-metadata", "class-transformer"])
      link(join(WORKSPACE, "node_modules", lib), join(dir, "node_modules", lib));
    for (const [path, content] of Object.entries(files)) fixture.write(path, content);
    return fixture;
  }

  path(relative: string): string {
    return join(this.dir, relative);
  }

  write(relative: string, content: string): void {
    const path = this.path(relative);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }

  read(relative: string): string {
    return readFileSync(this.path(relative), "utf8");
  }

  exists(relative: string): boolean {
    return existsSync(this.path(relative));
  }

  /** Replaces one exact piece of a file; fails loudly when it is not there, so edits never miss silently. */
  replace(relative: string, from: string, to: string): void {
    const text = this.read(relative);
    if (!text.includes(from)) throw new Error(`${relative} does not contain ${JSON.stringify(from)}`);
    this.write(relative, text.replace(from, to));
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function link(target: string, path: string): void {
  if (!existsSync(target)) return;
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path, "dir");
}
