import "reflect-metadata";
import { expect } from "chai";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Config, DATA_DIR_STATUSES, DataDirReader, Engine, RejectedError } from "@fusee/runtime";
import { Order } from "./fixtures/ui-workflows.js";
import { runBatch } from "../src/ui/batch-actions.js";
import { type RunningUi, startUi } from "./support/running-ui.js";
import { runCli } from "../src/cli.js";
import type { Io } from "../src/io.js";

const here = dirname(fileURLToPath(import.meta.url));
const main = join(here, "..", "src", "main.js");
const HOSTILE_ID = "<script>alert(1)</script>";

async function get(url: string): Promise<{ status: number; type: string; body: string }> {
  const response = await fetch(url);
  return { status: response.status, type: response.headers.get("content-type") ?? "", body: await response.text() };
}

/** A GET with a Host header of our choosing, which fetch does not allow setting. */
function getAs(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host }, agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    req.on("error", reject).end();
  });
}

function tcpHandles(): string[] {
  return process.getActiveResourcesInfo().filter((r) => r.startsWith("TCP"));
}

async function settle(cond: () => boolean): Promise<boolean> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  return cond();
}

describe("fusee ui", function () {
  this.timeout(30_000);
  let tmp: string;
  let data: string;
  let engine: Engine;
  let ui: RunningUi;

  async function waiting(id: string): Promise<void> {
    while ((await engine.run(id).status())?.status !== "suspended") await new Promise((r) => setTimeout(r, 5));
  }

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "fusee-ui-"));
    data = join(tmp, "data");
    // The engine keeps running while the server reads its directory.
    engine = await Engine.open(Config.local(data).shards(2).keepHistory(true), { workflows: [Order] });
    await engine.start(Order, "order-done", { note: "done" });
    await waiting("order-done");
    await engine.run("order-done").signal("go");
    await engine.run("order-done").result();
    await engine.start(Order, "order-failed", { note: "bad", fail: true });
    await engine
      .run("order-failed")
      .result()
      .catch(() => undefined);
    await engine.start(Order, "order/waiting", { note: "<b>bold</b>" });
    await waiting("order/waiting");
    await engine.start(Order, HOSTILE_ID, { note: "x" });
    await waiting(HOSTILE_ID);
    await engine.schedule("nightly", { workflow: Order, every: "1d", input: { note: "nightly" } });
    await engine.schedule("reports", { workflow: "Order", cron: "0 2 * * *", timezone: "Europe/Paris", paused: true });
    ui = await startUi("--data", data, "--port", "0");
  });

  after(async () => {
    await ui?.stop();
    await engine.shutdown();
    rmSync(tmp, { recursive: true, force: true });
  });

  describe("pages", () => {
    it("prints the URL it serves on 127.0.0.1", () => {
      expect(ui.output()).to.match(/^fusee ui: http:\/\/127\.0\.0\.1:\d+\/ /);
    });

    it("lists the runs newest first with their status, escaping every ID", async () => {
      const r = await get(ui.url);
      expect(r.status).to.equal(200);
      expect(r.type).to.contain("text/html");
      const ids = [...r.body.matchAll(/<a href="\/runs\/([^"]+)">/g)].map((m) => decodeURIComponent(m[1]!));
      expect(ids).to.deep.equal([HOSTILE_ID, "order/waiting", "order-failed", "order-done"]);
      expect(r.body).to.contain('<a href="/runs/order%2Fwaiting">order/waiting</a>');
      expect(r.body).to.contain("&lt;script&gt;alert(1)&lt;/script&gt;").and.not.contain("<script>");
      expect(r.body).to.match(/order-failed.*?<span class="badge tone-bad status-failed">failed<\/span>/s);
      expect(r.body).to.match(/order-done.*?<span class="badge tone-good status-ok">ok<\/span>/s);
      expect(r.body).to.contain("{&quot;note&quot;:&quot;&lt;b&gt;bold&lt;/b&gt;&quot;}");
    });

    it("offers every status the runtime's reader reports in the status filter", async () => {
      const r = await get(ui.url);
      const offered = [...r.body.matchAll(/<option value="([a-z]*)"/g)].map((m) => m[1]);
      expect(offered).to.deep.equal(["", ...DATA_DIR_STATUSES]);
    });

    it("shows a failed run's error with its stack", async () => {
      const r = await get(`${ui.url}runs/order-failed`);
      expect(r.body).to.match(
        /<section id="error" class="error-box"><h2>Error<\/h2><p class="error-head"><strong>Error<\/strong>: order refused: label:bad<\/p><pre class="stack">Error: order refused: label:bad\n\s+at Order\.run/,
      );
    });

    it("filters the runs by status and type from the query string", async () => {
      const failed = await get(`${ui.url}?status=failed`);
      expect(failed.status).to.equal(200);
      expect(failed.body).to.contain("order-failed").and.not.contain("order-done");
      const none = await get(`${ui.url}?type=Nothing&status=`);
      expect(none.body).to.contain("no runs");
    });

    it("shows one run with its journal records by kind, payloads escaped", async () => {
      const r = await get(`${ui.url}runs/${encodeURIComponent("order/waiting")}`);
      expect(r.status).to.equal(200);
      expect(r.body).to.contain("<h1>order/waiting</h1>").and.contain('<span class="badge tone-live status-running">running</span>');
      expect(r.body).to.contain("<code>start</code> 1, <code>step</code> 1, <code>attributes</code> 1");
      expect(r.body).to.contain("name=label").and.contain("&quot;label:&lt;b&gt;bold&lt;/b&gt;&quot;");
      expect(r.body).to.not.contain("<b>bold</b>");
    });

    it("says what a waiting run's journal leaves open, and that the code's waits need --workflows", async () => {
      const r = await get(`${ui.url}runs/${encodeURIComponent("order/waiting")}`);
      const waiting = /<section id="waiting">(.*?)<\/section>/s.exec(r.body)?.[1] ?? "";
      expect(waiting).to.contain("nothing in the journal is open").and.contain("<code>--workflows MODULE</code>");
      expect((await get(`${ui.url}runs/order-done`)).body).to.not.contain('<section id="waiting">');
    });

    it("escapes an ID holding markup on its own page", async () => {
      const r = await get(`${ui.url}runs/${encodeURIComponent(HOSTILE_ID)}`);
      expect(r.status).to.equal(200);
      expect(r.body).to.contain("<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>").and.not.contain("<script>");
    });

    it("shows the schedules: workflow, when, state, counts and next instants", async () => {
      const r = await get(`${ui.url}schedules`);
      expect(r.status).to.equal(200);
      expect(r.body).to.match(
        /nightly<\/td><td>Order<\/td><td class="mono">every 1d<\/td><td>skip<\/td><td>active<\/td>\s*<td>0<\/td><td>0<\/td><td>\d{4}-\d\d-\d\dT00:00:00\.000Z<br>/,
      );
      expect(r.body).to.match(
        /reports<\/td><td>Order<\/td><td class="mono">cron 0 2 \* \* \* \(Europe\/Paris\)<\/td><td>skip<\/td><td>paused<\/td>/,
      );
    });

    it("answers an unknown run or path with a 404 page and a bad query with a 400 page", async () => {
      const unknown = await get(`${ui.url}runs/nobody`);
      expect(unknown.status).to.equal(404);
      expect(unknown.body).to.contain("no run has the workflow ID &#39;nobody&#39;");
      expect((await get(`${ui.url}nowhere`)).status).to.equal(404);
      const bad = await get(`${ui.url}?status=sleeping`);
      expect(bad.status).to.equal(400);
      expect(bad.body).to.contain("unknown status &#39;sleeping&#39;");
      expect((await get(`${ui.url}?colour=red`)).status).to.equal(400);
      expect((await get(`${ui.url}?limit=-1`)).status).to.equal(400);
    });
  });

  describe("JSON", () => {
    it("serves the runs at /api/runs, filtered like the page", async () => {
      const r = await get(`${ui.url}api/runs?type=Order&limit=3`);
      expect(r.status).to.equal(200);
      expect(r.type).to.contain("application/json");
      const runs = JSON.parse(r.body) as Array<{ id: string; status: string }>;
      expect(runs.map((x) => x.id)).to.deep.equal([HOSTILE_ID, "order/waiting", "order-failed"]);
      const failed = JSON.parse((await get(`${ui.url}api/runs?status=failed`)).body) as Array<{ id: string; status: string }>;
      expect(failed).to.have.length(1).and.to.have.nested.property("[0].id", "order-failed");
    });

    it("serves one run and its records at /api/runs/<id>", async () => {
      const r = await get(`${ui.url}api/runs/order-done`);
      expect(r.status).to.equal(200);
      const run = JSON.parse(r.body) as { id: string; status: string; records: Array<{ kind: string; payload?: unknown }> };
      expect(run).to.include({ id: "order-done", status: "ok" });
      expect(run.records.map((x) => x.kind)).to.deep.equal(["start", "step", "attributes", "signal", "finish"]);
      expect(run.records.at(-1)?.payload).to.deep.equal({ plain: "label:done" });
      const hostile = JSON.parse((await get(`${ui.url}api/runs/${encodeURIComponent(HOSTILE_ID)}`)).body) as { id: string };
      expect(hostile.id).to.equal(HOSTILE_ID);
    });

    it("serves the schedules at /api/schedules", async () => {
      const r = await get(`${ui.url}api/schedules`);
      expect(r.status).to.equal(200);
      const schedules = JSON.parse(r.body) as Array<{
        name: string;
        workflow: string;
        every?: number;
        cron?: string;
        paused: boolean;
        started: number;
        nextTimes: number[];
      }>;
      expect(schedules.map((s) => s.name)).to.deep.equal(["nightly", "reports"]);
      expect(schedules[0]).to.include({ workflow: "Order", every: 86_400_000, paused: false, started: 0 });
      expect(schedules[0]!.nextTimes).to.have.length(3);
      expect(schedules[0]!.nextTimes[0]! % 86_400_000).to.equal(0);
      expect(schedules[1]).to.include({ cron: "0 2 * * *", paused: true });
      expect(schedules[1]!.nextTimes).to.deep.equal([]);
    });

    it("answers an unknown run with 404 and a bad query with 400, as JSON errors", async () => {
      const unknown = await get(`${ui.url}api/runs/nobody`);
      expect(unknown.status).to.equal(404);
      expect(JSON.parse(unknown.body)).to.deep.include({ ok: false }).and.have.nested.property("error.code", "FUSEE_NOT_FOUND");
      const bad = await get(`${ui.url}api/runs?status=sleeping`);
      expect(bad.status).to.equal(400);
      expect(JSON.parse(bad.body)).to.have.nested.property("error.code", "FUSEE_BAD_REQUEST");
    });

    it("sees runs started after the server started", async () => {
      await engine.start(Order, "order-late", { note: "late" });
      await waiting("order-late");
      const runs = JSON.parse((await get(`${ui.url}api/runs?limit=1`)).body) as Array<{ id: string }>;
      expect(runs.map((x) => x.id)).to.deep.equal(["order-late"]);
    });
  });

  describe("waits and batches", () => {
    it("lists a timer not fired as what a run waits on, without the code to tell a sleep from a wait's timeout", async () => {
      await engine.start(Order, "order-napping", { note: "nap", nap: true });
      await waiting("order-napping");
      const r = await get(`${ui.url}runs/order-napping`);
      const timer = /<li data-wait="timer">(.*?)<\/li>/s.exec(r.body)?.[1] ?? "";
      expect(timer).to.match(/^timer \(call #2\) due \S+ \(in (59m\d\ds|1h00m)\): a sleep, or the timeout of a wait that may have ended$/);
    });

    it("says when the workflows it was given cannot replay a run, with the first difference", async () => {
      const coded = await startUi("--data", data, "--workflows", join(here, "fixtures", "ui-workflows-changed.js"));
      try {
        const r = await get(`${coded.url}runs/${encodeURIComponent("order/waiting")}`);
        const note = /<p class="error">The workflows given cannot replay this run: (.*?)<\/p>/s.exec(r.body)?.[1] ?? "";
        expect(note).to.contain("&#39;label&#39;").and.contain("&#39;stamp&#39;");
        expect(r.body).to.not.contain('<li data-wait="signal">');
      } finally {
        await coded.stop();
      }
    });

    it("acts on every unfinished run a batch's filter matches, and reports each it could not act on", async () => {
      const asked: string[] = [];
      const actions = {
        signal: async () => undefined,
        reset: async () => undefined,
        terminate: async () => undefined,
        cancel: async (id: string, reason: string) => {
          asked.push(`${id}: ${reason}`);
          if (id === "order/waiting") throw new RejectedError("it finished meanwhile");
        },
      };
      const outcome = await runBatch(actions, () => DataDirReader.open(data), "type=Order&q=order", "cancel", "closing");
      expect(asked.sort()).to.deep.equal(["order-late: closing", "order-napping: closing", "order/waiting: closing"]);
      expect(outcome).to.deep.include({
        done: 2,
        failed: [{ id: "order/waiting", code: "FUSEE_REJECTED", message: "it finished meanwhile" }],
      });
      expect(outcome.summary).to.equal("cancelled 2 runs; 1 failed: order/waiting (it finished meanwhile)");
      expect((await runBatch(actions, () => DataDirReader.open(data), "status=ok", "cancel", "closing")).done).to.equal(
        0,
        "finished runs are left alone",
      );
      const bad = await runBatch(actions, () => DataDirReader.open(data), "colour=red", "cancel", "x").catch((e: Error) => e.message);
      expect(bad).to.contain("unknown query parameter 'colour'");
    });
  });

  describe("headers", () => {
    /** The nonce a page's policy names, and the nonces its script and style elements carry. */
    async function nonces(url: string): Promise<{ policy: string | undefined; tags: string[]; headers: Headers }> {
      const response = await fetch(url);
      const body = await response.text();
      const policy = /script-src 'nonce-([^']+)'/.exec(response.headers.get("content-security-policy") ?? "")?.[1];
      return { policy, tags: [...body.matchAll(/<(?:script|style) nonce="([^"]+)"/g)].map((m) => m[1]!), headers: response.headers };
    }

    it("forbids framing and allows only the page's own nonce for script and style, a fresh one each time", async () => {
      for (const path of ["", "runs/order-done", "schedules", "runs/nobody"]) {
        const { policy, tags, headers } = await nonces(`${ui.url}${path}`);
        const csp = headers.get("content-security-policy") ?? "";
        expect(headers.get("x-frame-options"), path).to.equal("DENY");
        expect(csp, path).to.contain("frame-ancestors 'none'").and.contain("default-src 'none'").and.not.contain("unsafe-inline");
        expect(csp, path).to.contain(`style-src 'nonce-${policy}'`);
        expect(policy, path).to.match(/^[A-Za-z0-9+/]{22}==$/);
        expect(tags, path).to.deep.equal([policy, policy]);
      }
      expect((await nonces(ui.url)).policy).to.not.equal((await nonces(ui.url)).policy);
    });

    it("forbids framing of the JSON, the script and the event stream, which load nothing", async () => {
      for (const path of ["api/runs", "api/runs/order-done", "ui.js", "api/nowhere"]) {
        const response = await fetch(`${ui.url}${path}`);
        expect(response.headers.get("x-frame-options"), path).to.equal("DENY");
        expect(response.headers.get("content-security-policy"), path)
          .to.contain("default-src 'none'")
          .and.contain("frame-ancestors 'none'");
        await response.body?.cancel();
      }
      const controller = new AbortController();
      const events = await fetch(`${ui.url}api/events`, { signal: controller.signal });
      expect(events.headers.get("x-frame-options")).to.equal("DENY");
      expect(events.headers.get("content-security-policy")).to.contain("frame-ancestors 'none'");
      controller.abort();
    });
  });

  describe("serving", () => {
    it("refuses writes and requests addressed to another host", async () => {
      expect((await fetch(ui.url, { method: "POST" })).status).to.equal(405);
      expect((await fetch(`${ui.url}api/batch/cancel`, { method: "POST", body: "{}" })).status).to.equal(403);
      expect(await getAs(ui.url, "evil.example")).to.equal(421);
      expect(await getAs(ui.url, `localhost:${new URL(ui.url).port}`)).to.equal(200);
    });

    it("exits 2 on a bad port and 1 on a folder that is not a data directory", async () => {
      let stderr = "";
      const io: Io = {
        stdout: { write: () => true },
        stderr: { write: (t: string) => (stderr += t) },
        color: false,
        cwd: process.cwd(),
        interrupted: () => new Promise(() => undefined),
      };
      expect(await runCli(["ui", "--data", data, "--port", "http"], io)).to.equal(2);
      expect(stderr).to.contain("--port");
      expect(await runCli(["ui", "--data", tmp], io)).to.equal(1);
      expect(stderr).to.contain("manifest");
    });

    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      it(`serves as a process until ${signal}, then exits 0`, async () => {
        const child = spawn(process.execPath, [main, "ui", "--data", data], {
          env: { ...process.env, NO_COLOR: "1" },
          stdio: ["ignore", "pipe", "pipe"],
        });
        const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
        let stdout = "";
        const url = await new Promise<string>((resolve, reject) => {
          child.stdout.on("data", (chunk: Buffer) => {
            stdout += chunk.toString();
            const found = /http:\/\/127\.0\.0\.1:\d+\//.exec(stdout)?.[0];
            if (found !== undefined) resolve(found);
          });
          child.on("exit", (code) => reject(new Error(`fusee ui exited with ${code} before serving: ${stdout}`)));
        });
        expect((await get(`${url}api/runs/order-done`)).status).to.equal(200);
        child.kill(signal);
        expect(await exited).to.equal(0);
      });
    }

    it("stops on an interrupt, exits 0 and leaves no socket open", async () => {
      const own = await startUi("--data", data);
      expect((await get(`${own.url}api/schedules`)).status).to.equal(200);
      expect(await own.stop()).to.equal(0);
      const stopped = await fetch(own.url).then(
        () => "answered",
        () => "refused",
      );
      expect(stopped).to.equal("refused");
      await ui.stop();
      expect(await settle(() => tcpHandles().length === 0), tcpHandles().join(", ")).to.equal(true);
    });
  });
});
