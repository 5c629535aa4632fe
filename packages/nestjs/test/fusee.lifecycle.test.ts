import "reflect-metadata";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Module } from "@nestjs/common";
import { expect } from "chai";
import { Config, Engine, FuseeError, type Duration } from "@fusee/runtime";
import { FuseeModule } from "../src/index.js";
import { Clerk, Filing } from "./fixtures/filing.js";
import { Ledger, Transfer } from "./fixtures/ledger.js";
import { boot } from "./support/boot.js";
import { rejection } from "./support/rejection.js";
import { tempDir } from "./support/temp-dir.js";

const SIGTERM_APP = fileURLToPath(new URL("./fixtures/sigterm-app.js", import.meta.url));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function filingModule(dir: string, drainTimeout?: Duration) {
  @Module({
    imports: [FuseeModule.forRoot({ config: Config.local(dir), workflows: [Filing], ...(drainTimeout !== undefined ? { drainTimeout } : {}) })],
    providers: [Clerk],
  })
  class AppModule {}
  return AppModule;
}

/** Waits until the clerk has started an attempt. */
async function untilStarted(clerk: Clerk): Promise<void> {
  for (let i = 0; i < 200 && clerk.started === 0; i++) await pause(5);
  expect(clerk.started, "attempts started").to.equal(1);
}

describe("FuseeLifecycle", () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir("lifecycle")));
  afterEach(() => dir.remove());

  describe("onApplicationBootstrap", () => {
    it("should resume a run an earlier application left unfinished only once every module's onModuleInit has run", async () => {
      @Module({ imports: [FuseeModule.forRoot({ config: Config.local(dir.path), workflows: [Transfer] })], providers: [Ledger] })
      class AppModule {}

      const first = await boot(AppModule);
      await first.get(Engine).start(Transfer, "t-1", 700);
      await first.close();
      expect(first.get(Ledger).lines, "booked before the restart").to.deep.equal([]);

      // The run's timer is due when the second application starts, so its step runs as soon as the
      // run resumes; it fails for good unless the ledger's onModuleInit has finished by then.
      await pause(Transfer.pause + 50);
      const second = await boot(AppModule);
      try {
        expect(await second.get(Engine).run<string>("t-1").result()).to.equal("booked 700");
        expect(second.get(Ledger).lines).to.deep.equal(["700"]);
      } finally {
        await second.close();
      }
    });
  });

  describe("onApplicationShutdown", () => {
    it("should let a running step finish before the engine shuts down on app.close()", async () => {
      const AppModule = filingModule(dir.path);
      const first = await boot(AppModule);
      await first.get(Engine).start(Filing, "f-1", undefined);
      await untilStarted(first.get(Clerk));
      await first.close();
      expect(await rejection(first.get(Engine).start(Filing, "f-2", undefined))).to.be.an.instanceOf(FuseeError);

      const second = await boot(AppModule);
      try {
        expect(await second.get(Engine).run<string>("f-1").result()).to.equal("filed");
        expect(second.get(Clerk).started, "attempts after the restart").to.equal(0);
      } finally {
        await second.close();
      }
    });

    it("should abort a running step at once when drainTimeout is 0, so that it runs again after a restart", async () => {
      const first = await boot(filingModule(dir.path, 0));
      await first.get(Engine).start(Filing, "f-1", undefined);
      await untilStarted(first.get(Clerk));
      await first.close();

      const second = await boot(filingModule(dir.path));
      try {
        expect(await second.get(Engine).run<string>("f-1").result()).to.equal("filed");
        expect(second.get(Clerk).started, "attempts after the restart").to.equal(1);
      } finally {
        await second.close();
      }
    });

    it("should drain and shut down when the process gets SIGTERM with app.enableShutdownHooks()", async () => {
      const exit = await new Promise<{ signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [SIGTERM_APP], { env: { ...process.env, FUSEE_DATA: dir.path }, stdio: ["ignore", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        const guard = setTimeout(() => child.kill("SIGKILL"), 15_000);
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk;
          if (stdout.includes("step started")) child.kill("SIGTERM");
        });
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        child.on("error", reject);
        child.on("close", (_code, signal) => {
          clearTimeout(guard);
          resolve({ signal, stdout, stderr });
        });
      });
      expect(exit.stderr).to.equal("");
      // Nest re-raises the signal once its shutdown hooks have run.
      expect(exit.signal).to.equal("SIGTERM");

      const second = await boot(filingModule(dir.path));
      try {
        expect(await second.get(Engine).run<string>("f-1").result()).to.equal("filed");
        expect(second.get(Clerk).started, "attempts after the restart").to.equal(0);
      } finally {
        await second.close();
      }
    });
  });
});
