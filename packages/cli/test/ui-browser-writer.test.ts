import "reflect-metadata";
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { BROWSER_WORKFLOWS, launchChromium, SHOTS, until } from "./support/browser.js";
import { type RunningUi, startUi } from "./support/running-ui.js";
import { WriterProcess } from "./support/writer-process.js";

const HOUR = 3_600_000;

describe("fusee ui in Chromium, beside an engine in another process", function () {
  this.timeout(60_000);
  let tmp: string;
  let writer: WriterProcess;
  let ui: RunningUi;
  let browser: Browser;
  let page: Page;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "fusee-ui-writer-"));
    const data = join(tmp, "data");
    [writer, browser] = await Promise.all([WriterProcess.start(data), launchChromium()]);
    await writer.call("start", { type: "Parcel", id: "parcel-1", value: { items: 2 } });
    await writer.call("start", { type: "Flaky", id: "charge-1" });
    await writer.call("start", { type: "Doomed", id: "order-9" });
    await writer.call("start", { type: "Slow", id: "crunch-1" });
    await writer.call("schedule", { name: "hourly", type: "Shipment", value: { cents: 80 } });
    await writer.call("trigger", { name: "hourly" });
    await new Promise((r) => setTimeout(r, 5));
    await writer.call("trigger", { name: "hourly" });
    // Read-only, given the code: it replays unfinished runs to learn what they wait for.
    ui = await startUi("--data", data, "--workflows", BROWSER_WORKFLOWS);
  });

  after(async () => {
    await ui?.stop();
    await writer?.stop();
    await browser?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  beforeEach(async () => {
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  });
  afterEach(async () => {
    await page.close();
  });

  it("follows what a run waits on and its children live, as the other process writes, without a reload", async () => {
    await page.goto(`${ui.url}runs/parcel-1`);
    await page.locator("#live.on").waitFor();
    await page.evaluate("window.loaded = true");
    const waits = page.locator("#waiting li");
    const child = (id: string) => page.locator(`ul.family li[data-id="${id}"]`);
    await until("the first label awaited", async () =>
      /^child parcel-1\/label-1 running, started \S+$/.test((await waits.allInnerTexts()).join("|")),
    );
    expect(await child("parcel-1/label-1").locator(".badge").innerText()).to.equal("running");

    await writer.call("signal", { id: "parcel-1/label-1", name: "print" });
    await child("parcel-1/label-2").waitFor();
    await until(
      "the first label ok in the tree",
      async () => (await child("parcel-1/label-1").locator(".badge").first().innerText()) === "ok",
    );
    await until("the second label awaited", async () =>
      (await waits.allInnerTexts()).some((t) => t.startsWith("child parcel-1/label-2 running")),
    );

    await writer.call("signal", { id: "parcel-1/label-2", name: "print" });
    const signal = page.locator('#waiting li[data-wait="signal"]');
    await signal.waitFor();
    const givesUp = Date.parse(/gives up (\S+)/.exec(await signal.innerText())?.[1] ?? "");
    expect(await signal.innerText()).to.match(/^signal collect, gives up \S+ \(in (59m\d\ds|1h00m)\)$/);
    expect(givesUp - Date.now()).to.be.within(HOUR - 60_000, HOUR);
    expect(await waits.count()).to.equal(1, "the wait's timeout is listed with it, not as a timer of its own");
    await page.screenshot({ path: join(SHOTS, "waiting.png"), fullPage: true });

    await writer.call("signal", { id: "parcel-1", name: "collect", value: "the courier" });
    const timer = page.locator('#waiting li[data-wait="timer"]');
    await timer.waitFor();
    expect(await timer.innerText()).to.match(/^timer \(call #\d+\) due \S+ \(in (23h59m|24h00m)\): a sleep$/);
    expect(await waits.count()).to.equal(1);
    expect(await page.evaluate("window.loaded")).to.equal(true, "the page was never reloaded");
    expect(Number(await page.locator("body").getAttribute("data-refreshes"))).to.be.greaterThan(2);
  });

  it("links a child to its parent and the parent to its children", async () => {
    await page.goto(`${ui.url}runs/parcel-1`);
    await page.locator('ul.family li.current[data-id="parcel-1"]').waitFor();
    await page.locator('ul.family a[href="/runs/parcel-1%2Flabel-2"]').click();
    await page.waitForURL(/label-2$/);
    expect(await page.locator("h1").innerText()).to.equal("parcel-1/label-2");
    expect(await page.locator("ul.family li.current").getAttribute("data-id")).to.equal("parcel-1/label-2");
    expect(await page.locator("table.facts").innerText()).to.contain("Parent\tparcel-1 (run 1)");
    await page.locator("table.facts a.parent").click();
    await page.waitForURL(/runs\/parcel-1$/);
    const tree = await page.locator("ul.family").innerText();
    expect(tree).to.contain("parcel-1/label-1").and.contain("parcel-1/label-2");
    expect(await page.locator("table.facts").innerText()).to.contain("Children\t2");
  });

  it("shows a retrying step's failed attempt, its error with the stack, and when the next attempt is due", async () => {
    await page.goto(`${ui.url}runs/charge-1`);
    const step = page.locator('#waiting li[data-wait="step"]');
    expect(await step.innerText()).to.match(/^step charge \(call #1\): attempt 1 failed \S+; attempt 2 due \S+ \(in (59m\d\ds|1h00m)\)/);
    const due = Date.parse((await step.locator("time.retry-at").innerText()).trim());
    expect(due - Date.now()).to.be.within(HOUR - 60_000, HOUR);
    await step.locator("summary").click();
    const stack = step.locator("pre.stack");
    expect(await stack.isVisible()).to.equal(true);
    expect(await stack.innerText())
      .to.match(/^CardDeclined: card declined\n/)
      .and.contain("at Flaky.charge");
    expect(await step.innerText()).to.contain('reason: "insufficient funds"');
    await page.screenshot({ path: join(SHOTS, "retrying.png"), fullPage: true });
  });

  it("names the step whose first attempt runs now, which only the code can tell", async () => {
    await page.goto(`${ui.url}runs/crunch-1`);
    expect(await page.locator("#waiting li").allInnerTexts()).to.deep.equal([
      "step 'crunch' (call #1): the code's next call, not in the journal yet (its first attempt runs now, or is about to)",
    ]);
  });

  it("shows a failed run's error with its stack and its cause", async () => {
    await page.goto(`${ui.url}runs/order-9`);
    const error = page.locator("section#error");
    expect(await error.locator("h2").innerText()).to.equal("Error");
    expect(await error.locator(".error-head").allInnerTexts()).to.deep.equal([
      "Error: the order was refused",
      "RangeError: weight over 30 kg",
    ]);
    const [stack, cause] = await error.locator("pre.stack").allInnerTexts();
    expect(stack).to.match(/^Error: the order was refused\n\s+at Doomed\.run/);
    expect(cause).to.match(/^RangeError: weight over 30 kg\n\s+at Doomed\.run/);
    expect(await error.innerText()).to.contain("Caused by");
    expect(await page.locator("#waiting").count()).to.equal(0, "a finished run waits on nothing");
    await page.screenshot({ path: join(SHOTS, "failed.png"), fullPage: true });
  });

  it("places a scheduled run among the schedule's runs, linked both ways", async () => {
    const runs = (await (await fetch(`${ui.url}api/runs?type=Shipment`)).json()) as Array<{ id: string; schedule?: { instant: number } }>;
    const [first, second] = runs.filter((r) => r.schedule !== undefined).sort((a, b) => a.schedule!.instant - b.schedule!.instant);
    await page.goto(`${ui.url}runs/${encodeURIComponent(second!.id)}`);
    const position = page.locator("section#schedule");
    expect(await position.innerText())
      .to.contain("hourly every 1h, overlap allow-all")
      .and.contain("run 2 of the 2 of this schedule")
      .and.contain("the schedule is paused");
    await position.locator(`a[href="/runs/${encodeURIComponent(first!.id)}"]`).click();
    await page.waitForURL(new RegExp(encodeURIComponent(first!.id)));
    expect(await page.locator("section#schedule").innerText()).to.contain("run 1 of the 2 of this schedule");
    expect(await page.locator(`section#schedule a[href="/runs/${encodeURIComponent(second!.id)}"]`).count()).to.equal(1);
  });

  it("says that actions are unavailable, and why, when asked for while the other process writes the directory", async () => {
    const acting = await startUi("--data", join(tmp, "data"), "--allow-actions");
    try {
      await page.goto(`${acting.url}runs/charge-1`);
      expect(await page.locator("aside#actions-unavailable").innerText()).to.contain("open for writing by process");
      expect(await page.locator("form[data-action]").count()).to.equal(0);
      const refused = await fetch(`${acting.url}api/batch/terminate`, { method: "POST", body: "{}" });
      expect(refused.status).to.equal(409);
    } finally {
      await acting.stop();
    }
  });
});
