import "reflect-metadata";
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Config, DataDirReader, Engine } from "@fusee/runtime";
import type { Browser, Page } from "playwright-core";
import { startUiServer, type UiServer } from "../src/ui/server.js";
import { Shipment } from "./fixtures/ui-browser-workflows.js";
import { BROWSER_WORKFLOWS, launchChromium, SHOTS, until } from "./support/browser.js";
import { type RunningUi, startUi } from "./support/running-ui.js";

describe("fusee ui in Chromium", function () {
  this.timeout(60_000);
  let tmp: string;
  let data: string;
  let browser: Browser;
  let page: Page;

  before(async function () {
    tmp = mkdtempSync(join(tmpdir(), "fusee-ui-browser-"));
    data = join(tmp, "data");
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  beforeEach(async () => {
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  });
  afterEach(async () => {
    await page.close();
  });

  describe("following an engine that runs on the directory", () => {
    let engine: Engine;
    let server: UiServer;

    before(async () => {
      engine = await Engine.open(Config.local(data).shards(2).keepHistory(true), { workflows: [Shipment] });
      for (const [id, cents] of [
        ["ship-1", 700],
        ["ship-2", 300],
        ["ship-3", 900],
        ["ship-4", 400],
      ] as const)
        await engine.start(Shipment, id, { cents });
      await until("ship-1 waiting", async () => (await engine.status("ship-1"))?.status === "suspended");
      await engine.run("ship-1").update("note", "fragile");
      await engine.run("ship-1").signal("go", "now");
      await engine.run("ship-1").result();
      await engine.schedule("restock", { workflow: Shipment, every: "1h", input: { cents: 50 } });
      // Left waiting for the batch actions of the next suite.
      for (const id of ["batch-c-1", "batch-c-2", "batch-t-1", "batch-t-2"]) await engine.start(Shipment, id, { cents: 10 });
      server = await startUiServer({ port: 0, open: () => DataDirReader.open(data), pollMs: 100 });
    });

    after(async () => {
      await server.close();
      await engine.shutdown();
    });

    it("draws a run's journal as a timeline of steps, attempts, the timer, the update and the signal", async () => {
      await page.goto(`${server.url}runs/ship-1`);
      const svg = page.locator("svg.timeline");
      await svg.waitFor();
      expect(await svg.locator('[data-kind="step"]').count()).to.equal(3, "quote, pack and ship");
      expect(await svg.locator('[data-kind="attempt"]').count()).to.equal(1, "pack's failed first attempt");
      expect(await svg.locator('[data-kind="timer"]').count()).to.be.greaterThanOrEqual(1);
      expect(await svg.locator('[data-kind="update"]').count()).to.be.greaterThanOrEqual(1);
      expect(await svg.locator('[data-kind="signal"]').count()).to.equal(1);
      expect(await svg.locator("title").allTextContents())
        .to.include.members([])
        .and.satisfy((titles: string[]) => titles.some((t) => t.startsWith("pack attempt 1 failed")));
      // The update and the signal may come while the timer runs or after it: the order of those rows varies.
      const events = page.locator("table.events tr.event");
      const kinds = await events.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-kind") ?? ""));
      expect([kinds[0], kinds.at(-1)]).to.deep.equal(["run", "run"]);
      expect(kinds.sort()).to.deep.equal(
        ["attributes", "run", "run", "signal", "step", "step", "step", "timer", "update"],
        "one row per step call (pack's failed attempt in its row), the timer set and fired in one, the update and its answer in one",
      );
      expect(await events.filter({ hasText: "pack ok after 2 attempts" }).count()).to.equal(1);
      expect(await events.filter({ hasText: '"fragile" → 1' }).count()).to.equal(1);
      expect(await page.locator("table.journal tr.record").count()).to.equal(12, "the full journal keeps every record");
      const text = await page.locator("main").innerText();
      expect(text).to.contain('Freight { cents: 700, currency: "EUR" }');
      expect(text).to.contain("12345678901234567890n");
      expect(text).to.contain('Map { "fragile" => 0 }');
      expect(text).to.contain("Error: the packing robot jammed");
      expect(text).to.not.contain('"$"');
      await page.screenshot({ path: join(SHOTS, "run.png"), fullPage: true });
    });

    it("shows new runs and status changes live, without a reload", async () => {
      await page.goto(server.url);
      await page.locator("#live.on").waitFor();
      await engine.start(Shipment, "ship-live", { cents: 120 });
      await page.locator('tr[data-id="ship-live"]').waitFor({ timeout: 10_000 });

      await page.goto(`${server.url}runs/ship-2`);
      await page.locator("#live.on").waitFor();
      expect(await page.locator("table.facts .status-running").count()).to.equal(1);
      await until("ship-2 waiting", async () => (await engine.status("ship-2"))?.status === "suspended");
      await engine.run("ship-2").signal("go", "later");
      await page.locator("table.facts .status-ok").waitFor({ timeout: 10_000 });
      expect(await page.locator('svg.timeline [data-kind="signal"]').count()).to.equal(1);
      expect(Number(await page.locator("body").getAttribute("data-refreshes"))).to.be.greaterThan(0);
    });

    it("filters by status, type, attributes, time and ID, and pages with a cursor", async () => {
      await page.goto(`${server.url}?status=ok`);
      const ids = async (): Promise<string[]> =>
        page.locator("table.runs tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-id") ?? ""));
      expect(await ids())
        .to.include("ship-1")
        .and.not.include("ship-3");
      await page.goto(`${server.url}?attr=region%3Deu`);
      expect((await ids()).sort()).to.deep.equal(["ship-1", "ship-3"]);
      await page.goto(`${server.url}?q=ship-3`);
      expect(await ids()).to.deep.equal(["ship-3"]);
      await page.goto(`${server.url}?type=Nothing`);
      expect(await ids()).to.deep.equal([]);
      await page.goto(`${server.url}?to=1000`);
      expect(await ids()).to.deep.equal([]);

      await page.goto(`${server.url}?type=Shipment&limit=2`);
      const first = await ids();
      expect(first).to.have.length(2);
      await page.locator("a.next").click();
      await page.waitForURL(/cursor=/);
      const second = await ids();
      expect(second.length).to.be.greaterThan(0);
      expect(second.filter((id) => first.includes(id))).to.deep.equal([], "no run shows on two pages");
      await page.goto(`${server.url}?type=Shipment`);
      await page.screenshot({ path: join(SHOTS, "runs.png"), fullPage: true });
    });

    it("shows the schedules with their next fire times and recent starts", async () => {
      await page.goto(`${server.url}schedules`);
      const row = page.locator("tbody tr", { hasText: "restock" });
      await row.waitFor();
      expect(await row.innerText())
        .to.contain("every 1h")
        .and.contain("Shipment");
      expect(await row.locator("td").nth(7).innerText()).to.match(/\d{4}-\d{2}-\d{2}/);
      await page.screenshot({ path: join(SHOTS, "schedules.png"), fullPage: true });
    });

    it("answers 403 to every action, with no forms on the page, when actions are not allowed", async () => {
      await page.goto(`${server.url}runs/ship-3`);
      expect(await page.locator("form[data-action]").count()).to.equal(0);
      for (const action of ["runs/ship-3/signal", "runs/ship-3/cancel", "runs/ship-3/terminate", "runs/ship-3/reset", "batch/cancel"]) {
        const r = await fetch(`${server.url}api/${action}`, {
          method: "POST",
          body: "{}",
          headers: { "content-type": "application/json" },
        });
        expect(r.status, action).to.equal(403);
      }
    });
  });

  describe("with --allow-actions", () => {
    let ui: RunningUi;

    before(async () => {
      ui = await startUi("--data", data, "--allow-actions", "--workflows", BROWSER_WORKFLOWS);
    });
    after(async () => {
      await ui?.stop();
    });

    it("says on the page that actions are unavailable while another process writes the directory, and refuses them", async () => {
      const second = await startUi("--data", data, "--allow-actions");
      try {
        expect(second.output()).to.contain("actions are unavailable").and.contain("open for writing by process");
        await page.goto(`${second.url}runs/ship-2`);
        const note = page.locator("aside#actions-unavailable");
        expect(await note.innerText())
          .to.contain("cannot be opened for writing")
          .and.contain(`open for writing by process ${process.pid}`);
        expect(await page.locator("form[data-action]").count()).to.equal(0);
        const refused = await fetch(`${second.url}api/runs/ship-2/cancel`, { method: "POST", body: "{}" });
        expect(refused.status).to.equal(409);
        expect(((await refused.json()) as { error: { code: string } }).error.code).to.equal("FUSEE_ACTIONS_UNAVAILABLE");
        await page.goto(second.url);
        expect(await page.locator("aside#actions-unavailable").count()).to.equal(1);
      } finally {
        await second.stop();
      }
    });

    it("signals, resets, cancels and terminates runs from the page", async () => {
      await page.goto(`${ui.url}runs/ship-3`);
      await page.locator("#live.on").waitFor();
      await until("ship-3 waiting", async () => (await page.locator("table.facts .status-running").count()) === 1);
      await page.screenshot({ path: join(SHOTS, "actions.png"), fullPage: true });
      const signal = page.locator('form[data-action="signal"]');
      await signal.locator('input[name="name"]').fill("go");
      await signal.locator('input[name="value"]').fill('"from the page"');
      await signal.locator("button").click();
      await signal.locator("output.done").waitFor();
      await page.locator("table.facts .status-ok").waitFor({ timeout: 10_000 });
      expect(await page.locator("main").innerText()).to.contain('go: "from the page"');

      // Accepting fails only when the page closed meanwhile, which the test's next step reports.
      page.on("dialog", (d) => d.accept().catch(() => undefined));
      const reset = page.locator('form[data-action="reset"]');
      await reset.locator('input[name="step"]').fill("ship");
      await reset.locator("button").click();
      await until("the reset's answer", async () => ((await reset.locator("output").textContent()) ?? "") !== "");
      expect(await reset.locator("output").textContent()).to.equal("done");
      await until("run 2 of ship-3", async () => (await page.locator("table.facts").innerText()).includes("Run\t2"));

      await page.goto(`${ui.url}runs/ship-live`);
      const cancel = page.locator('form[data-action="cancel"]');
      await cancel.locator("button").click();
      await until("the cancel's answer", async () => ((await cancel.locator("output").textContent()) ?? "") !== "");
      expect(await cancel.locator("output").textContent()).to.equal("done");
      await page.locator("table.facts .status-cancelled").waitFor({ timeout: 10_000 });

      await page.goto(`${ui.url}runs/ship-4`);
      const terminate = page.locator('form[data-action="terminate"]');
      await terminate.locator('input[name="reason"]').fill("wrong address");
      await terminate.locator("button").click();
      await terminate.locator("output.done").waitFor();
      await page.locator("table.facts .status-terminated").waitFor({ timeout: 10_000 });
      expect(await page.locator("main").innerText()).to.contain("wrong address");
    });

    it("cancels, then terminates, every unfinished run a filter matches, from the runs page", async () => {
      // Accepting fails only when the page closed meanwhile, which the test's next step reports.
      page.on("dialog", (d) => d.accept().catch(() => undefined));
      const ids = async (): Promise<string[]> =>
        page.locator("table.runs tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-id") ?? ""));
      const statuses = async (): Promise<string[]> => page.locator("table.runs tbody .badge").allInnerTexts();

      await page.goto(`${ui.url}?q=batch-c-&status=running&limit=1`);
      expect(await ids()).to.have.length(1, "one run per page: the batch acts on every page");
      expect(await page.locator("main p.match").innerText()).to.equal("2 unfinished runs match this filter");
      const confirmations: string[] = [];
      page.on("dialog", (d) => void confirmations.push(d.message()));
      const batch = page.locator("aside.batch");
      await batch.locator('form[data-action="batch-cancel"] input[name="reason"]').fill("the ship sank");
      await batch.locator('form[data-action="batch-cancel"] button').click();
      await batch.locator('form[data-action="batch-cancel"] output.done').waitFor();
      expect(await batch.locator('form[data-action="batch-cancel"] output').textContent()).to.equal("cancelled 2 runs");
      expect(confirmations).to.deep.equal(["Cancel the 2 unfinished runs that match this filter?"]);
      await page.goto(`${ui.url}?q=batch-c-`);
      await until("both cancelled", async () => (await statuses()).join() === "cancelled,cancelled");

      await page.goto(`${ui.url}?q=batch-t-`);
      await page.screenshot({ path: join(SHOTS, "batch.png"), fullPage: true });
      await page.locator('aside.batch form[data-action="batch-terminate"] button').click();
      await page.locator('aside.batch form[data-action="batch-terminate"] output.done').waitFor();
      await until("both terminated, live", async () => (await statuses()).join() === "terminated,terminated");
      await page.goto(`${ui.url}runs/batch-t-1`);
      expect(await page.locator("section#error").innerText()).to.contain("terminated from fusee ui");
    });

    it("refuses a POST without this process's token, or with another", async () => {
      const post = (token?: string): Promise<Response> =>
        fetch(`${ui.url}api/runs/ship-2/cancel`, {
          method: "POST",
          body: "{}",
          headers: { "content-type": "application/json", ...(token ? { "x-fusee-token": token } : {}) },
        });
      expect((await post()).status).to.equal(403);
      const wrong = await post("not-the-token");
      expect(wrong.status).to.equal(403);
      expect(((await wrong.json()) as { error: { code: string } }).error.code).to.equal("FUSEE_BAD_TOKEN");
      await page.goto(`${ui.url}runs/ship-2`);
      const token = (await page.locator('meta[name="fusee-token"]').getAttribute("content")) ?? "";
      expect(token.length).to.be.greaterThan(20);
      const unknown = await fetch(`${ui.url}api/runs/nobody/cancel`, { method: "POST", body: "{}", headers: { "x-fusee-token": token } });
      expect(unknown.status).to.equal(404);
    });
  });
});
