// Records the journals the replay tests keep: each scenario runs on a test engine and its journal is
// exported next to the tests. Run it again (npm run record-journals) only to add a scenario; the
// files already there are what older code wrote, and stay as they are.
import "reflect-metadata";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { container as root } from "tsyringe";
import { exportFileName, exportJournal, writeExport } from "@fusee/runtime";
import { TestEngine } from "@fusee/runtime/testing";
import { Billing } from "../src/billing.js";
import { Trial } from "../src/trial.js";

const dir = fileURLToPath(new URL("../../test/journals/", import.meta.url));
const billing = new Billing();
const services = root.createChildContainer();
services.registerInstance(Billing, billing);
const engine = await TestEngine.create({ workflows: [Trial], container: services });

await engine.start(Trial, "recorded-expired", "fay");
await engine.clock.advance("30d");
billing.outages = 1;
const upgraded = await engine.start(Trial, "recorded-subscribed", "gus");
await upgraded.signal("upgrade", "monthly");
await engine.clock.advance("2s");

for (const id of ["recorded-expired", "recorded-subscribed"]) {
  const file = `${dir}${exportFileName(id)}`;
  if (existsSync(file)) continue;
  writeExport(file, exportJournal((await engine.describe(id))!));
  console.log(`recorded ${file}`);
}
await engine.shutdown();
