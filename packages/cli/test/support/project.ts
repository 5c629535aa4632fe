import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Io } from "../../src/io.js";

/** The workspace root, found from this file's place in packages/cli/dist/test/support. */
export const WORKSPACE = findWorkspace(dirname(fileURLToPath(import.meta.url)));

/** The command's entry point as installed: `fusee` runs this file. */
export const MAIN = join(WORKSPACE, "packages/cli/dist/src/main.js");

function findWorkspace(from: string): string {
  for (let dir = from; dirname(dir) !== dir; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "fusee-workspace") return dir;
  }
  throw new Error(`no fusee workspace above ${from}`);
}

export const ORDER = `import { Workflow, Step, Signal, Ctx } from "@fusee/runtime";

@Workflow()
export class Order {
  constructor(private readonly ctx: Ctx) {}

  async run(id: string): Promise<string> {
    const count = await this.reserve(id);
    await this.ctx.sleep("1h"); return this.charge(count);
  }

  @Step() async reserve(id: string): Promise<number> { return id.length; }
  @Step() async charge(count: number): Promise<string> { return String(count); }
  @Step() async audit(): Promise<void> {}
  @Signal() cancel(reason: string): void { void reason; }
}
`;

/** A user project in a temporary folder whose node_modules links to the workspace's runtime. */
export class Project {
  readonly dir = mkdtempSync(join(tmpdir(), "fusee-cli-"));

  constructor(files: Readonly<Record<string, string>> = { "src/order.ts": ORDER }) {
    this.write("package.json", `${JSON.stringify({ name: "shop", private: true, type: "module" })}\n`);
    this.write(
      "tsconfig.json",
      `${JSON.stringify({
        compilerOptions: { target: "ES2022", lib: ["ES2023"], module: "NodeNext", moduleResolution: "NodeNext", strict: true, experimentalDecorators: true, skipLibCheck: true, noEmit: true, types: [] },
        include: ["src"],
      })}\n`,
    );
    const runtime = join(this.dir, "node_modules/@fusee/runtime");
    mkdirSync(dirname(runtime), { recursive: true });
    symlinkSync(join(WORKSPACE, "packages/runtime"), runtime, "dir");
    for (const [path, text] of Object.entries(files)) this.write(path, text);
  }

  path(relative: string): string {
    return join(this.dir, relative);
  }

  write(relative: string, text: string): void {
    mkdirSync(dirname(this.path(relative)), { recursive: true });
    writeFileSync(this.path(relative), text);
  }

  read(relative: string): string {
    return readFileSync(this.path(relative), "utf8");
  }

  exists(relative: string): boolean {
    return existsSync(this.path(relative));
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** An {@link Io} that records what a command prints, with an interrupt the specification triggers. */
export class RecordingIo implements Io {
  out = "";
  err = "";
  readonly stdout = { write: (text: string) => (this.out += text) };
  readonly stderr = { write: (text: string) => (this.err += text) };
  private interrupt: (() => void) | undefined;
  private readonly stop = new Promise<void>((resolve) => (this.interrupt = resolve));

  constructor(
    readonly cwd: string,
    readonly color = false,
  ) {}

  interrupted(): Promise<void> {
    return this.stop;
  }

  /** Acts as Ctrl-C does. */
  sendInterrupt(): void {
    this.interrupt?.();
  }
}
