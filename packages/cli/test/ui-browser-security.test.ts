import "reflect-metadata";
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, ConsoleMessage, Page } from "playwright-core";
import { HOSTILE } from "./fixtures/ui-browser-workflows.js";
import { BROWSER_WORKFLOWS, launchChromium, until } from "./support/browser.js";
import { type RunningUi, startUi } from "./support/running-ui.js";
import { WriterProcess } from "./support/writer-process.js";

const ID = `h-${HOSTILE}`;
const CHILD = `${ID}/${HOSTILE}`;

describe("fusee ui in Chromium, against hostile values and framing", function () {
  this.timeout(60_000);
  let tmp: string;
  let writer: WriterProcess;
  let ui: RunningUi;
  let browser: Browser;
  let page: Page;
  let console: ConsoleMessage[];
  let dialogs: string[];

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "fusee-ui-hostile-"));
    const data = join(tmp, "data");
    [writer, browser] = await Promise.all([WriterProcess.start(data), launchChromium()]);
    await writer.call("start", { type: "Hostile", id: ID, value: { html: HOSTILE } });
    await writer.call("start", { type: "Flaky", id: "charge-1" });
    await until("the hostile run waiting", async () => (await writer.call<string>("status", { id: ID })) === "suspended");
    await writer.stop();
    // With its engine gone, the UI takes the directory over, so its pages hold the action forms.
    ui = await startUi("--data", data, "--workflows", BROWSER_WORKFLOWS, "--allow-actions");
  });

  after(async () => {
    await ui?.stop();
    await browser?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  beforeEach(async () => {
    page = await browser.newPage();
    console = [];
    dialogs = [];
    page.on("console", (m) => console.push(m));
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      // Fails only when the page closed meanwhile, which the test's next step reports.
      d.dismiss().catch(() => undefined);
    });
  });
  afterEach(async () => {
    await page.close();
  });

  /** Asserts the page ran its own script, none from the data, and shows the markup as text. */
  async function ranNothing(where: string): Promise<void> {
    await page.locator("#live.on").waitFor();
    expect(await page.evaluate("window.__pwned"), where).to.equal(undefined);
    const injected = await page.locator("body script, body img, body [onload], body [onerror], body a[href^='javascript:']").count();
    expect(injected, `${where}: elements made from the data`).to.equal(0);
    expect(await page.locator("main").innerText(), where).to.contain('<script>window.__pwned="script"</script>');
    const blocked = console.filter((m) => m.text().includes("Content Security Policy"));
    expect(
      blocked.map((m) => m.text()),
      `${where}: nothing even reached the policy`,
    ).to.deep.equal([]);
    expect(dialogs, `${where}: dialogs`).to.deep.equal([]);
  }

  it("runs no script from IDs, attributes, step results, signal names and values, or errors, on any page", async () => {
    // Hostile waits for a signal named after its input; its value and the error it then throws carry markup too.
    await page.goto(`${ui.url}runs/${encodeURIComponent(ID)}`);
    await ranNothing("the run's page, waiting");
    expect(await page.locator('#waiting li[data-wait="signal"] code').innerText()).to.equal(HOSTILE);
    expect(await page.locator("datalist#signal-names option").getAttribute("value")).to.equal(HOSTILE);

    const signal = page.locator('form[data-action="signal"]');
    await signal.locator('input[name="name"]').fill(HOSTILE);
    await signal.locator('input[name="value"]').fill(HOSTILE);
    await signal.locator("button").click();
    // The live refresh parses the fresh page and swaps it in: it must run nothing either.
    await page.locator("section#error").waitFor({ timeout: 10_000 });
    await ranNothing("the run's page, refreshed live after it failed");
    expect(await page.locator("section#error .error-head").innerText()).to.equal(`Error: ${HOSTILE} ${HOSTILE}`);

    for (const [path, where] of [
      ["", "the runs page"],
      [`?q=${encodeURIComponent(HOSTILE)}`, "the runs page filtered by the markup"],
      [`runs/${encodeURIComponent(CHILD)}`, "the child's page"],
    ] as const) {
      await page.goto(`${ui.url}${path}`);
      await ranNothing(where);
    }
    expect(await page.locator("ul.family li.current").getAttribute("data-id")).to.equal(CHILD);
  });

  describe("framed by a page of another origin", () => {
    let framer: Server;
    let origin: string;

    before(async () => {
      // The framing page and the control page it frames are served by one server under two names, two origins.
      framer = createServer((request, response) => {
        response.setHeader("content-type", "text/html; charset=utf-8");
        if (request.url === "/control") return response.end("<p>control page</p>");
        const port = (framer.address() as AddressInfo).port;
        response.end(
          `<iframe name="ui" src="${ui.url}runs/charge-1"></iframe><iframe name="control" src="http://localhost:${port}/control"></iframe>`,
        );
      });
      await new Promise<void>((resolve) => framer.listen(0, "127.0.0.1", resolve));
      origin = `http://127.0.0.1:${(framer.address() as AddressInfo).port}/`;
    });
    after(() => {
      framer.close();
    });

    it("does not load a run's page, with its action forms, inside the frame", async () => {
      await page.goto(origin);
      const control = page.frame({ name: "control" });
      await until(
        "the control frame",
        async () =>
          ((await control
            ?.locator("p")
            .textContent()
            .catch(() => null)) ?? "") === "control page",
      );
      const framed = page.frame({ name: "ui" });
      await until("the UI's frame refused", () => console.some((m) => m.text().includes("frame-ancestors 'none'")));
      expect(framed?.url()).to.match(/^chrome-error:/);
      expect(await framed?.locator("form[data-action]").count()).to.equal(0);
      expect(await framed?.locator("main").count()).to.equal(0);
      // The same page loads at the top level: it is the frame that is refused.
      await page.goto(`${ui.url}runs/charge-1`);
      expect(await page.locator('form[data-action="cancel"]').count()).to.equal(1);
    });
  });
});
