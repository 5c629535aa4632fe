// What the engine and users import from the PostgreSQL storage engine; the rest is internal.
export {
  type AcquiredListener,
  type LostListener,
  type NotifyListener,
  PostgresLog,
  type PostgresLogOptions,
  openPostgresLog,
} from "./pg-log.js";
export type { StopReason } from "./group-insert.js";
export type { LeaseRow } from "./leases.js";
export { LATEST_VERSION, MIGRATIONS, type Migration, type MigrationResult, migrate } from "./migrations.js";
export { DEFAULT_SCHEMA } from "./schema.js";
