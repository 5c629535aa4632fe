import "reflect-metadata";
import { rmSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { AlreadyExistsError, Config, Engine, type RunStatusValue } from "@fusee/runtime";
import { audit, type Outcome } from "./audit.js";
import { scriptFor, type OrderScript } from "./batch.js";
import { money } from "./catalog.js";
import { Display, LEGEND } from "./display.js";
import { Fulfilment } from "./fulfilment.js";
import { FulfilmentClient } from "./fusee.generated.js";
import type { Receipt } from "./model.js";
// The worker type table of `fusee gen`: constructor types for builds without decorator metadata,
// and the workflow's mailbox names, so a signal it cannot take is refused.
import "./fusee.workflows.generated.js";
import { servicesContainer } from "./services/container.js";
import { Warehouse } from "./warehouse.js";

const USAGE = `usage: node dist/src/main.js [--reset]

Runs a batch of orders through the Fulfilment workflow. Stop it at any time (Ctrl-C, or kill it)
and start it again: finished orders are not redone, unfinished ones carry on.

  --reset   delete the data directory first and start a fresh batch

environment:
  FUSEE_DATA     data directory (default ./data): the engine's journal in journal/, the
                 services' ledgers in services/
  FUSEE_ORDERS   orders in the batch (default 20)`;

const POLL_MS = 100;
const FINISHED: readonly RunStatusValue[] = ["ok", "failed", "cancelled", "terminated"];

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

async function main(): Promise<number> {
  // A closed pipe (`| head`) only silences the output; the batch carries on.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
  });
  const args = process.argv.slice(2);
  if (args.includes("--help") || args.some((a) => a !== "--reset")) {
    console.log(USAGE);
    return args.includes("--help") ? 0 : 2;
  }
  const count = Number(process.env.FUSEE_ORDERS ?? 20);
  if (!Number.isInteger(count) || count < 1) {
    console.error(`FUSEE_ORDERS must be a whole number ≥ 1; got ${process.env.FUSEE_ORDERS}`);
    return 2;
  }
  const dataDir = resolve(process.env.FUSEE_DATA ?? "data");
  if (args.includes("--reset")) rmSync(dataDir, { recursive: true, force: true });
  const servicesDir = join(dataDir, "services");
  const startedAt = Date.now();

  const engine = await Engine.open(Config.local(join(dataDir, "journal")).keepHistory(true), {
    workflows: [Fulfilment],
    container: servicesContainer({ dir: servicesDir }),
  });

  const fulfilment = new FulfilmentClient(engine);
  const scripts: OrderScript[] = Array.from({ length: count }, (_, i) => scriptFor(i + 1));
  const display = new Display(
    process.stdout,
    scripts.map((s) => s.id),
    startedAt,
  );
  let stopping = false;
  process.once("SIGINT", () => {
    stopping = true;
    process.once("SIGINT", () => process.exit(130));
    display.line("stopping: waiting for the journal to reach the disk (Ctrl-C again to quit at once)");
    const exit = (message: string): never => {
      display.finish();
      console.log(message);
      process.exit(130);
    };
    engine.shutdown().then(
      () => exit("stopped; run again to carry on where this left off"),
      (e: unknown) => exit(`stopping failed (${(e as Error)?.message ?? String(e)}); run again to carry on from what reached the disk`),
    );
  });

  const outcomes = new Map<string, Outcome>();
  let finishedEarlier = 0;
  let resumed = 0;
  await Promise.all(
    scripts.map(async (script) => {
      const status = await engine.status(script.id);
      if (status !== undefined && FINISHED.includes(status.status)) {
        finishedEarlier++;
        const outcome = await outcomeOf(fulfilment, script.id);
        outcomes.set(script.id, outcome);
        display.set(script.id, outcome.ok ? "ok" : "failed");
        return;
      }
      if (status !== undefined) resumed++;
      try {
        // A run left unfinished by an earlier process is picked up, never started twice.
        await fulfilment.start(script.id, script.order, { idPolicy: { running: "use-existing", finished: "refuse" } });
      } catch (e) {
        if (!(e instanceof AlreadyExistsError)) throw e;
      }
    }),
  );
  const where = relative(process.cwd(), dataDir) || ".";
  display.line(
    `${plural(count, "order")} · ${finishedEarlier} finished earlier · ${resumed} resumed · ${count - finishedEarlier - resumed} new · data: ${where}`,
  );
  display.line(LEGEND);

  const warehouse = new Warehouse(fulfilment, display, () => stopping);
  while (outcomes.size < count && !stopping) {
    for (const script of scripts) {
      if (outcomes.has(script.id) || stopping) continue;
      const status = await engine.status(script.id);
      if (status !== undefined && FINISHED.includes(status.status)) {
        const outcome = await outcomeOf(fulfilment, script.id);
        outcomes.set(script.id, outcome);
        display.set(script.id, outcome.ok ? "ok" : "failed");
        display.event(script.id, outcome.ok ? shippedLine(outcome.receipt) : `✗ failed: ${outcome.error}`);
        continue;
      }
      try {
        const progress = await fulfilment.run(script.id).queries.progress();
        display.set(script.id, progress.stage);
        warehouse.see(script, progress);
      } catch {
        if (stopping) break;
        display.set(script.id, "unknown");
      }
    }
    display.render();
    if (outcomes.size < count) await sleep(POLL_MS);
  }
  // The SIGINT handler exits once the engine has shut down; there is no summary to print.
  if (stopping) return new Promise(() => undefined);
  await warehouse.idle();
  display.finish();

  const receipts = [...outcomes.values()].flatMap((o) => (o.ok ? [o.receipt] : []));
  const failed = count - receipts.length;
  const retries = receipts.reduce((t, r) => t + r.retries, 0);
  const refunded = receipts.reduce((t, r) => t + r.refundedCents, 0);
  const paid = receipts.reduce((t, r) => t + r.totalCents, 0);
  console.log(
    `${plural(count, "order")} in ${((Date.now() - startedAt) / 1000).toFixed(1)}s: ${receipts.length} ok, ${failed} failed · ` +
      `${plural(retries, "retry", "retries")} recovered · ${money(paid)} taken, ${money(refunded)} refunded`,
  );
  const report = audit(servicesDir, outcomes);
  const totals = `${plural(report.charges, "charge")}, ${plural(report.refunds, "refund")}, ${plural(report.shipments, "shipment")}`;
  await engine.shutdown();
  if (report.problems.length > 0) {
    console.log(`ledgers: ${totals}; ${plural(report.problems.length, "problem")}:`);
    for (const p of report.problems) console.log(`  ${p}`);
    return 1;
  }
  console.log(`ledgers: ${totals}; no order charged twice, every receipt matches what was paid`);
  return 0;
}

async function outcomeOf(fulfilment: FulfilmentClient, id: string): Promise<Outcome> {
  try {
    return { ok: true, receipt: await fulfilment.run(id).result() };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

function shippedLine(r: Receipt): string {
  const missing = r.missing.length > 0 ? ` · ${money(r.refundedCents)} refunded for ${r.missing.map((l) => l.sku).join(", ")}` : "";
  const retries = r.retries > 0 ? ` · ${plural(r.retries, "retry", "retries")}` : "";
  return `✓ shipped ${r.trackingNo} · ${money(r.totalCents)}${missing}${retries}`;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exitCode = 1;
  },
);
