import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { expect } from "chai";
import { bundleApp, run, WORKSPACE } from "../support/workspace.js";

const PACKAGES = ["runtime", "compiler", "cli", "nestjs"] as const;

/** The version the workspace has installed, so npm finds it in its cache. */
const installed = (name: string): string =>
  (JSON.parse(readFileSync(join(WORKSPACE, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;

/** Starts the app (the tsc build by default) and resolves with its URL once it listens. */
async function startApp(
  app: string,
  dataDir: string,
  entry: readonly string[] = ["dist/main.js"],
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...entry], {
    cwd: app,
    env: { ...process.env, PORT: "0", FUSEE_DATA: dataDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the app did not listen within 30 s:\n${output}`)), 30_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.once("exit", (code) => reject(new Error(`the app exited with ${code}:\n${output}`)));
  });
  return { child, url };
}

/** What `nest new` of Nest CLI 12 installs to run its tests: vitest 4, on Vite 8. */
const VITEST = { vitest: "4.1.12", vite: "8.4.1" };

/**
 * A fresh Nest application shaped as `nest new` of Nest CLI 12 makes it (an ES module, Nest's
 * tsconfig, vitest) installs fusee from the tarballs `npm pack` makes of the workspace's packages,
 * follows docs/nestjs.md (fusee gen, FuseeModule.forRoot, a workflow among the providers with an
 * injected service, the generated client in a controller), builds with tsc, serves over HTTP, runs
 * its vitest suite (FuseeTestingModule, a crash and a restart) and replays its journals outside Nest.
 */
describe("a Nest application on fusee from packed tarballs", function () {
  this.timeout(180_000);
  let scratch: string;
  let app: string;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), "fusee-nest-app-"));
    const packs = join(scratch, "packs");
    mkdirSync(packs);
    const { stdout } = await run(
      "npm",
      ["pack", "--json", "--pack-destination", packs, ...PACKAGES.flatMap((p) => ["--workspace", `packages/${p}`])],
      { cwd: WORKSPACE },
    );
    const tarballs = new Map(
      (JSON.parse(stdout) as { name: string; filename: string }[]).map((p) => [p.name, `file:${join(packs, p.filename)}`]),
    );
    app = join(scratch, "app");
    cpSync(join(WORKSPACE, "test/fixtures/nest-app"), app, { recursive: true });
    const tarball = (name: string): string => tarballs.get(name) ?? expect.fail(`npm pack made no tarball of ${name}`);
    const manifest = {
      name: "nest-app",
      version: "0.0.1",
      private: true,
      type: "module",
      scripts: { build: "tsc -p tsconfig.build.json", start: "node dist/main", test: "vitest run" },
      dependencies: {
        "@fusee/nestjs": tarball("@fusee/nestjs"),
        "@fusee/runtime": tarball("@fusee/runtime"),
        ...Object.fromEntries(
          ["@nestjs/common", "@nestjs/core", "@nestjs/platform-express", "reflect-metadata", "rxjs"].map((n) => [n, installed(n)]),
        ),
      },
      devDependencies: {
        "@fusee/cli": tarball("@fusee/cli"),
        "@fusee/compiler": tarball("@fusee/compiler"),
        "@nestjs/testing": installed("@nestjs/testing"),
        "@types/node": installed("@types/node"),
        typescript: installed("typescript"),
        ...VITEST,
      },
    };
    writeFileSync(join(app, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    // The workspace's install filled npm's cache; prefer it, so only what it lacks comes from the registry.
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: app });
    await run(process.execPath, [join(app, "node_modules/@fusee/cli/bin/fusee.js"), "gen"], { cwd: app });
    await run(process.execPath, [join(app, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: app });
  });

  after(() => rmSync(scratch, { recursive: true, force: true }));

  it("serves a workflow whose step calls an injected service, through the generated client, and stops cleanly", async () => {
    const { child, url } = await startApp(app, join(scratch, "data"));
    try {
      expect(await (await fetch(url)).text()).to.equal("Hello World!");
      const started = await fetch(`${url}/welcome/ada`, { method: "POST" });
      expect(started.status).to.equal(201);
      expect(await started.json()).to.deep.equal({ id: "welcome-ada" });
      const confirmed = await fetch(`${url}/welcome/ada/confirm`, { method: "POST" });
      expect(await confirmed.json()).to.deep.equal({ mail: "Hello World! Welcome, ada." });
    } finally {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      // Nest's shutdown hooks close the application (and with it the engine), then raise the signal again.
      const [code, signal] = (await exited) as [number | null, string | null];
      expect({ code, signal }, "ended by SIGTERM after Nest's shutdown hooks").to.deep.equal({ code: null, signal: "SIGTERM" });
    }
  });

  it("starts again on the same data directory, which the first process released", async () => {
    const { child, url } = await startApp(app, join(scratch, "data"));
    try {
      expect(await (await fetch(url)).text()).to.equal("Hello World!");
      // The ID's run finished before the restart; the default ID policy starts a new one.
      expect((await fetch(`${url}/welcome/ada`, { method: "POST" })).status).to.equal(201);
      expect(await (await fetch(`${url}/welcome/ada/confirm`, { method: "POST" })).json()).to.deep.equal({
        mail: "Hello World! Welcome, ada.",
      });
    } finally {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    }
  });

  /** Serves one welcome through the app started by `entry`, then stops it with SIGTERM. */
  async function welcomeThrough(entry: readonly string[], name: string): Promise<void> {
    const { child, url } = await startApp(app, join(scratch, `data-${name}`), entry);
    try {
      expect((await fetch(`${url}/welcome/${name}`, { method: "POST" })).status).to.equal(201);
      expect(await (await fetch(`${url}/welcome/${name}/confirm`, { method: "POST" })).json()).to.deep.equal({
        mail: `Hello World! Welcome, ${name}.`,
      });
    } finally {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    }
  }

  it("serves under tsx, which records no constructor types: the worker type table and @Inject(Class) in the controller", async () => {
    await welcomeThrough([join(WORKSPACE, "node_modules/tsx/dist/cli.mjs"), "src/main.ts"], "tsx");
  });

  it("serves from an esbuild bundle of its own code, its packages left to node_modules", async () => {
    const { outfile } = await bundleApp(app);
    await welcomeThrough([outfile], "esbuild");
  });

  it("runs its vitest suite: FuseeTestingModule gives back the module's workflows after a crash and a restart", async () => {
    // vitest 4 builds with Vite 8, which records constructor types as tsc does, so Nest injects the
    // spec's services without the worker type table.
    const { stdout } = await run(process.execPath, [join(app, "node_modules/vitest/vitest.mjs"), "run"], {
      cwd: app,
      env: { ...process.env, NO_COLOR: "1", CI: "1" },
    });
    expect(stdout).to.match(/Tests\s+2 passed/);
  });

  it("replays the journals of its Nest workflows outside Nest, with the workflow module alone", async () => {
    const fusee = join(app, "node_modules/@fusee/cli/bin/fusee.js");
    const journals = join(scratch, "journals");
    await run(process.execPath, [fusee, "export", "--data", join(scratch, "data"), "--out", journals], { cwd: app });
    const { stdout } = await run(process.execPath, [fusee, "replay", journals, "--workflows", "dist/welcome.workflow.js", "--json"], {
      cwd: app,
    });
    const replayed = JSON.parse(stdout) as { ok: boolean; different: number; results: { workflowId: string; ok: boolean }[] };
    // The ID's latest run, replayed with no Mailer nor AppService built.
    expect(replayed.results.map((r) => [r.workflowId, r.ok])).to.deep.equal([["welcome-ada", true]]);
    expect(replayed).to.include({ ok: true, different: 0 });
  });

  it("ships a README and a LICENSE in every package", () => {
    for (const p of PACKAGES) {
      const dir = join(app, "node_modules/@fusee", p);
      expect(readFileSync(join(dir, "README.md"), "utf8"), `@fusee/${p} README`).to.contain(`@fusee/${p}`);
      expect(readFileSync(join(dir, "LICENSE"), "utf8"), `@fusee/${p} LICENSE`).to.match(/license/i);
    }
  });
});
