import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.FUSEE_CHROMIUM ?? "/usr/bin/chromium";

/** The compiled module of the browser suites' workflows, as `fusee ui --workflows` takes it. */
export const BROWSER_WORKFLOWS = join(here, "..", "fixtures", "ui-browser-workflows.js");

/** Where screenshots go: with FUSEE_UI_SCREENSHOTS=1 into docs/ui for the docs, otherwise into a scratch folder. */
export const SHOTS =
  process.env.FUSEE_UI_SCREENSHOTS === "1"
    ? join(here, "..", "..", "..", "..", "..", "docs", "ui")
    : mkdtempSync(join(tmpdir(), "fusee-ui-shots-"));

/** Starts Debian's Chromium (or the one FUSEE_CHROMIUM names) headless. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install it (apt-get install -y chromium) or set FUSEE_CHROMIUM`);
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
}

/** Polls `check` until it holds, failing after `ms`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
