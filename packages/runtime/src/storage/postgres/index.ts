// What the engine and users import from the PostgreSQL storage engine; the rest is internal.
export {
  type AcquiredListener,
  type ClusterTables,
  type LostListener,
  type NotifyListener,
  OWNER_WAKE_SHARD,
  PostgresLog,
  type PostgresLogOptions,
  openPostgresLog,
} from "./pg-log.js";
export type { StopReason } from "./group-insert.js";
export type { LeaseRow } from "./leases.js";
export type { Answer, NewRequest, PendingRequest, Reply, RequestFence, RequestTable } from "./request-table.js";
export { REQUEST_WAKE } from "./request-table.js";
export type { PermitTable } from "./permit-table.js";
export { LATEST_VERSION, MIGRATIONS, type Migration, type MigrationResult, migrate } from "./migrations.js";
export { DEFAULT_SCHEMA } from "./schema.js";
