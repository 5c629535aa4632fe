import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { call } from "./support/http.js";
import { tempDir } from "./support/temp-dir.js";

const MAIN = fileURLToPath(new URL("../src/main.js", import.meta.url));

describe("main", () => {
  it("should serve orders on the port it prints, and stop cleanly on SIGTERM", async () => {
    const dir = tempDir("main");
    try {
      const child = spawn(process.execPath, [MAIN], {
        env: { ...process.env, FUSEE_DATA: dir.path, PORT: "0" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const guard = setTimeout(() => child.kill("SIGKILL"), 15_000);
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("close", (_code, signal) => resolve(signal)));
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      const url = await new Promise<string>((resolve, reject) => {
        let stdout = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk;
          const match = /orders listening on (http:\/\/\S+)/.exec(stdout);
          if (match?.[1] !== undefined) resolve(match[1]);
        });
        child.on("close", () => reject(new Error(`main exited before listening: ${stderr}`)));
      });

      const placed = await call(url, "POST", "/orders/o-1", { customer: "ada", lines: [{ sku: "mug", qty: 1 }] });
      expect(placed.status).to.equal(201);
      child.kill("SIGTERM");
      clearTimeout(guard);
      // Nest re-raises the signal once the application, and with it the engine, has shut down.
      expect(await exited).to.equal("SIGTERM");
      expect(stderr).to.equal("");
    } finally {
      dir.remove();
    }
  });
});
