import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { build, type BuildOptions } from "esbuild";
import { appFromFixture, bin, bundleApp, run, WORKSPACE } from "../support/workspace.js";

const LINKED = {
  "@fusee/runtime": "packages/runtime",
  tsyringe: "node_modules/tsyringe",
  "reflect-metadata": "node_modules/reflect-metadata",
  "class-transformer": "node_modules/class-transformer",
  "@types/node": "node_modules/@types/node",
  // The runtime's native packages, which a whole-program bundle leaves out (see docs/getting-started.md).
  "@node-rs/crc32": "node_modules/@node-rs/crc32",
  "fs-native-extensions": "node_modules/fs-native-extensions",
};

/** The packages with native `.node` files that a bundle of the whole program leaves external. */
const NATIVE = ["@node-rs/crc32", "fs-native-extensions"];

/** What an ES-module bundle of CommonJS packages needs to `require` Node's own modules. */
const REQUIRE_BANNER = 'import { createRequire as bannerRequire } from "node:module"; const require = bannerRequire(import.meta.url);';

const GREETED = { result: { text: "hello ada", fee: "3.00 EUR", tip: 5 }, approved: true, typo: "FUSEE_REJECTED" };

/** The one JSON line the app prints. */
const outcome = (stdout: string): unknown => JSON.parse(stdout.trim().split("\n").at(-1) ?? "null");

/**
 * One app (a workflow with an injected service that has a service of its own) generated with
 * `fusee gen`, then built and run three ways: tsc (decorator metadata), tsx and esbuild (none).
 */
describe("toolchains", function () {
  this.timeout(120_000);
  let app: string;

  before(async () => {
    app = appFromFixture("toolchain-app", LINKED);
    await run(process.execPath, [join(WORKSPACE, "packages/cli/bin/fusee.js"), "gen", "--project", app], { cwd: app });
  });

  after(() => rmSync(app, { recursive: true, force: true }));

  describe("fusee gen → tsc → node", () => {
    before(async () => {
      await run(process.execPath, [bin("typescript/bin/tsc"), "-p", app], { cwd: app });
    });

    it("runs the workflow through the generated client, a misspelled signal refused", async () => {
      const { stdout } = await run(process.execPath, ["dist/main.js"], { cwd: app });
      expect(outcome(stdout)).to.deep.equal(GREETED);
    });

    it("injects services from the compiler's metadata alone, without the worker type table", async () => {
      const { stdout } = await run(process.execPath, ["dist/main-bare.js"], { cwd: app });
      // Without the table nothing declares the mailboxes, so the misspelled signal waits in one.
      expect(outcome(stdout)).to.deep.equal({ ...GREETED, typo: "accepted" });
    });
  });

  describe("tsx", () => {
    const tsx = (entry: string, ...options: string[]) => run(process.execPath, [bin("tsx/dist/cli.mjs"), ...options, entry], { cwd: app });

    it("runs the workflow with the services injected through the worker type table", async () => {
      expect(outcome((await tsx("src/main.ts")).stdout)).to.deep.equal(GREETED);
    });

    it("fails without the table with a ConfigError naming the class, the missing setting and the fix", async () => {
      const result = outcome((await tsx("src/main-bare.ts")).stdout) as { error: { code: string; message: string } };
      expect(result.error.code).to.equal("FUSEE_CONFIG");
      expect(result.error.message).to.contain("class Greeting has constructor parameters but no recorded types");
      expect(result.error.message).to.contain('"emitDecoratorMetadata": true').and.contain("npx fusee gen");
    });

    it("refuses decorators built as standard decorators, naming experimentalDecorators", async () => {
      writeFileSync(
        join(app, "tsconfig.standard.json"),
        JSON.stringify({ extends: "./tsconfig.json", compilerOptions: { experimentalDecorators: false, emitDecoratorMetadata: false } }),
      );
      const failed = await tsx("src/main.ts", "--tsconfig", "tsconfig.standard.json").then(
        () => undefined,
        (e: Error) => e.message,
      );
      expect(failed)
        .to.match(/ConfigError: @\w+ on \w+ was called as a standard \(TC39\) decorator/)
        .and.contain('"experimentalDecorators": true');
    });
  });

  describe("esbuild", () => {
    it("bundles the app, whose workflow and services come from the worker type table", async () => {
      const { outfile, result: built } = await bundleApp(app);
      expect(built.errors).to.deep.equal([]);
      const { stdout } = await run(process.execPath, [outfile], { cwd: app });
      expect(outcome(stdout)).to.deep.equal(GREETED);
    });

    it("bundles the whole program but the native packages, which stay installed beside it", async () => {
      const options: BuildOptions = {
        entryPoints: [join(app, "src/main.ts")],
        absWorkingDir: app,
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        banner: { js: REQUIRE_BANNER },
        // Loaded only when configured, and not installed here.
        external: ["pg", "@opentelemetry/api"],
        logLevel: "silent",
      };
      const failed = await build({ ...options, outfile: join(app, "bundle/whole.js") }).then(
        () => "",
        (e: Error) => e.message,
      );
      expect(failed, "esbuild has no loader for .node files").to.contain(".node");
      const outfile = join(app, "bundle/all-but-native.js");
      await build({ ...options, external: [...(options.external ?? []), ...NATIVE], outfile });
      const { stdout } = await run(process.execPath, [outfile, "--local", join(app, "bundle-data")], { cwd: app });
      expect(outcome(stdout)).to.deep.equal(GREETED);
    });
  });
});
