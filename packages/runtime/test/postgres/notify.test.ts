import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { openPostgresLog, type PostgresLog, type PostgresLogOptions } from "../../src/storage/postgres/pg-log.js";
import { PG_URL, sql, useSchemas } from "./support/database.js";
import { eventually, sleep } from "../support/wait.js";

describe("PostgreSQL wake-ups", () => {
  const schema = useSchemas();
  let logs: PostgresLog[] = [];
  const open = async (options: Omit<PostgresLogOptions, "url">): Promise<PostgresLog> => {
    const log = await openPostgresLog({ url: PG_URL, background: false, ...options });
    logs.push(log);
    return log;
  };
  afterEach(async () => {
    await Promise.allSettled(logs.map((l) => l.close()));
    logs = [];
  });

  it("wakes the process that holds the shard, and only it", async () => {
    const name = schema();
    const owner = await open({ schema: name, shards: 2, owner: "owner" });
    const writer = await open({ schema: name, owner: "writer" });
    const woken: [string, number, string | undefined][] = [];
    await owner.onNotify((shard, payload) => woken.push(["owner", shard, payload]));
    await writer.onNotify((shard, payload) => woken.push(["writer", shard, payload]));

    await writer.notify(1, "run-7");
    await eventually("the owner to be woken", () => woken.length > 0);
    await sleep(50);
    expect(woken).to.deep.equal([["owner", 1, "run-7"]]);
  });

  it("polls every owned shard as the fallback for a missed notification", async () => {
    const log = await open({ schema: schema(), shards: 2, owner: "owner", pollMs: 50 });
    const polls = new Set<number>();
    await log.onNotify((shard, payload) => {
      if (payload === undefined) polls.add(shard);
    });
    await eventually("a poll of both shards", () => polls.size === 2, 2_000);
  });

  it("listens again after its connection was cut, and polls right away for what it missed", async () => {
    const name = schema();
    const owner = await open({ schema: name, shards: 1, owner: "cut", pollMs: 60_000 });
    const woken: (string | undefined)[] = [];
    await owner.onNotify((_, payload) => woken.push(payload));
    await sql(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE application_name = 'fusee cut' AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
    );
    await eventually("a poll after reconnecting", () => woken.includes(undefined), 5_000);
    await owner.notify(0, "after");
    await eventually("the notification after reconnecting", () => woken.includes("after"), 5_000);
  });

  it("refuses a payload PostgreSQL could not carry", async () => {
    const log = await open({ schema: schema(), shards: 1 });
    const err = await log.notify(0, "x".repeat(8000)).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message).to.contain("shard 0");
  });
});
