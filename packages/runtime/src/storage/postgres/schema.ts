import { ConfigError } from "../../core/errors.js";

/** The schema a PostgreSQL log lives in unless told otherwise. */
export const DEFAULT_SCHEMA = "fusee";

/**
 * Longest schema name accepted. The wake-up channel is named after the schema, and a channel name
 * is an identifier of at most 63 bytes.
 */
const MAX_SCHEMA_LENGTH = 48;

/** Qualified, quoted names of everything a log keeps in its schema. */
export interface Tables {
  /** The schema name as given (unquoted). */
  readonly schema: string;
  /** The quoted schema, for `CREATE SCHEMA`. */
  readonly quoted: string;
  readonly migrations: string;
  readonly settings: string;
  /** The per-entry table of migrations 1 to 5, replaced by `batches`. */
  readonly entries: string;
  /** A shard's entries, one row per committed batch. */
  readonly batches: string;
  readonly leases: string;
  readonly owners: string;
  /** Operations one process of a cluster asks the owner of a shard to perform. */
  readonly requests: string;
  /** The owners' answers to `requests`, read by the asking process. */
  readonly replies: string;
  /** Permits of the limits the processes of a cluster share, one row per permit held. */
  readonly permits: string;
  /** When each rate-limited limit last let an attempt start. */
  readonly rates: string;
  /** The function that takes a permit (see migration 3). */
  readonly takePermit: string;
  /** The LISTEN/NOTIFY channel of this schema (a plain string for `pg_notify`). */
  readonly channel: string;
}

/**
 * The table names of a schema. Names are restricted to lower-case letters, digits and underscores,
 * so they are safe to splice into SQL and mean the same quoted or not.
 */
export function tablesOf(schema: string = DEFAULT_SCHEMA): Tables {
  if (typeof schema !== "string" || !/^[a-z_][a-z0-9_]*$/.test(schema) || schema.length > MAX_SCHEMA_LENGTH) {
    throw new ConfigError(
      `the PostgreSQL schema name "${String(schema)}" is not valid: use 1 to ${MAX_SCHEMA_LENGTH} lower-case ` +
        "letters, digits and underscores, starting with a letter or an underscore",
    );
  }
  const q = `"${schema}"`;
  return {
    schema,
    quoted: q,
    migrations: `${q}.migrations`,
    settings: `${q}.settings`,
    entries: `${q}.entries`,
    batches: `${q}.batches`,
    leases: `${q}.leases`,
    owners: `${q}.owners`,
    requests: `${q}.requests`,
    replies: `${q}.replies`,
    permits: `${q}.permits`,
    rates: `${q}.rates`,
    takePermit: `${q}.take_permit`,
    channel: `${schema}_wake`,
  };
}
