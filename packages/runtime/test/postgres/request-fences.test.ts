import { expect } from "chai";
import { openPostgresLog, type PostgresLog } from "../../src/storage/postgres/pg-log.js";
import type { RequestTable } from "../../src/storage/postgres/index.js";
import { sql, PG_URL, useSchemas } from "./support/database.js";

const ID = "00000000-0000-4000-8000-000000000001";

describe("RequestTable", () => {
  const schema = useSchemas();
  let log: PostgresLog | undefined;
  let requests: RequestTable | undefined;
  afterEach(async () => {
    await requests?.close();
    await log?.close();
    log = requests = undefined;
  });

  /** A process "asker" holding both shards of a fresh schema, and its request table. */
  async function asker(): Promise<{ name: string; table: RequestTable; epoch: number }> {
    const name = schema();
    log = await openPostgresLog({ url: PG_URL, schema: name, shards: 2, owner: "asker", background: false });
    requests = log.clusterTables().requests;
    return { name, table: requests, epoch: log.epochOf(0)! };
  }

  const ask = (table: RequestTable, fence?: { shard: number; epoch: number }): Promise<void> =>
    table.ask([{ id: ID, shard: 1, kind: "start", payload: Buffer.from("args"), ...(fence === undefined ? {} : { fence }) }], "asker");

  describe("pending", () => {
    it("should report the fence of a request whose asker still holds the fencing shard at its epoch as holding", async () => {
      const { table, epoch } = await asker();
      await ask(table, { shard: 0, epoch });
      const [request] = await table.pending(1, new Set());
      expect(request?.fence).to.deep.equal({ shard: 0, epoch, holds: true });
    });

    it("should report the fence as lost once the asker's lease on the fencing shard expired", async () => {
      const { name, table, epoch } = await asker();
      await ask(table, { shard: 0, epoch });
      await sql(`UPDATE "${name}".leases SET expires_at = clock_timestamp() - interval '1 millisecond' WHERE shard = 0`);
      const [request] = await table.pending(1, new Set());
      expect(request?.fence).to.deep.equal({ shard: 0, epoch, holds: false });
    });

    it("should report the fence as lost once another process took the fencing shard", async () => {
      const { name, table, epoch } = await asker();
      await ask(table, { shard: 0, epoch });
      await sql(`UPDATE "${name}".leases SET owner = 'other', epoch = epoch + 1 WHERE shard = 0`);
      const [request] = await table.pending(1, new Set());
      expect(request?.fence?.holds).to.equal(false);
    });

    it("should report the fence as lost once the asker holds the fencing shard again at a later epoch", async () => {
      const { name, table, epoch } = await asker();
      await ask(table, { shard: 0, epoch });
      await sql(`UPDATE "${name}".leases SET epoch = epoch + 1 WHERE shard = 0`);
      const [request] = await table.pending(1, new Set());
      expect(request?.fence?.holds).to.equal(false);
    });

    it("should report no fence for a request asked without one", async () => {
      const { table } = await asker();
      await ask(table);
      const [request] = await table.pending(1, new Set());
      expect(request?.id).to.equal(ID);
      expect(request?.fence).to.equal(undefined);
    });
  });
});
