import { type PostgresLog, openPostgresLog } from "../../src/storage/postgres/pg-log.js";
import type { Log } from "../../src/storage/index.js";
import { logContract } from "../storage/support/log-contract.js";
import { PG_URL, useSchemas } from "./support/database.js";

describe("Log contract", () => {
  describe("PostgresLog", () => {
    const schema = useSchemas();
    logContract({
      open: (shards) => openPostgresLog({ url: PG_URL, schema: schema(), shards }),
      reopen: async (log: Log) => {
        await log.close();
        return openPostgresLog({ url: PG_URL, schema: (log as PostgresLog).schema });
      },
    });
  });
});
