import { DATA_DIR_STATUSES, type DataDirRun, type ListFilter, type RunStatusValue } from "@fusee/runtime";
import { BadRequestError } from "./bad-request-error.js";

/**
 * The statuses the runs are filtered by: the ones a reader of the data directory reports, in the
 * runtime's order, so a status the runtime adds is offered here without a change.
 */
export const RUN_STATUSES: readonly RunStatusValue[] = DATA_DIR_STATUSES;

const DEFAULT_LIMIT = 100;
const PARAMETERS = new Set(["status", "type", "limit", "q", "from", "to", "cursor", "attr"]);
const ATTRIBUTE_PREFIX = "attr.";

/**
 * The query string of the runs page and `/api/runs`:
 * `?status=failed&type=Pay&attr.region=eu&from=2026-01-01&to=2026-02-01&q=pay-&limit=20&cursor=...`
 * (`attr=region=eu,tier=3` is the form's way of giving attributes).
 */
export interface RunQuery {
  readonly status?: RunStatusValue;
  readonly type?: string;
  /** Part of a workflow ID. */
  readonly q?: string;
  /** Runs started at or after this instant (ms since the epoch). */
  readonly from?: number;
  /** Runs started before this instant. */
  readonly to?: number;
  /** Search attributes that must equal these values. */
  readonly attributes: Readonly<Record<string, unknown>>;
  /** Where the page starts: after the run this cursor names (see {@link cursorOf}). */
  readonly cursor?: { readonly startedAt: number; readonly id: string };
  readonly limit: number;
}

/**
 * Reads the runs query. An empty value means "any", as the page's form sends it. An attribute's
 * value is read as JSON when it is JSON (`attr.count=3` is the number 3), as text otherwise.
 *
 * @throws BadRequestError on an unknown or repeated parameter, an unknown status, a bad time, limit or cursor.
 * @example
 * parseRunQuery(new URLSearchParams("status=failed")) // { status: "failed", attributes: {}, limit: 100 }
 */
export function parseRunQuery(params: URLSearchParams): RunQuery {
  const attributes: Record<string, unknown> = {};
  for (const key of new Set(params.keys())) {
    const attribute = key.startsWith(ATTRIBUTE_PREFIX) && key.length > ATTRIBUTE_PREFIX.length;
    if (!PARAMETERS.has(key) && !attribute) {
      throw new BadRequestError(
        `unknown query parameter '${key}'; the runs take status, type, q, from, to, attr (name=value, …), attr.<name>, cursor and limit`,
      );
    }
    if (params.getAll(key).length > 1) throw new BadRequestError(`query parameter '${key}' is given more than once`);
    const value = params.get(key) ?? "";
    if (attribute && value !== "") attributes[key.slice(ATTRIBUTE_PREFIX.length)] = jsonOrText(value);
    if (key === "attr") {
      for (const pair of value.split(",")) {
        if (pair.trim() === "") continue;
        const eq = pair.indexOf("=");
        if (eq <= 0) throw new BadRequestError(`attr takes name=value pairs separated by commas; got '${pair.trim()}'`);
        attributes[pair.slice(0, eq).trim()] = jsonOrText(pair.slice(eq + 1).trim());
      }
    }
  }
  const text = (name: string): string => params.get(name) ?? "";
  const status = text("status");
  if (status !== "" && !RUN_STATUSES.includes(status as RunStatusValue)) {
    throw new BadRequestError(`unknown status '${status}'; use one of ${RUN_STATUSES.join(", ")}`);
  }
  const limitText = text("limit");
  const limit = limitText === "" ? DEFAULT_LIMIT : Number(limitText);
  if (!/^\d+$/.test(limitText === "" ? "0" : limitText) || !Number.isSafeInteger(limit)) {
    throw new BadRequestError(`limit must be a whole number ≥ 0; got '${limitText}'`);
  }
  const from = instantOf(text("from"), "from");
  const to = instantOf(text("to"), "to");
  const cursor = text("cursor") === "" ? undefined : parseCursor(text("cursor"));
  return {
    ...(status !== "" ? { status: status as RunStatusValue } : {}),
    ...(text("type") !== "" ? { type: text("type") } : {}),
    ...(text("q") !== "" ? { q: text("q") } : {}),
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
    attributes,
    limit,
  };
}

/** The reader's filter for a query: status, type and attributes (the rest is applied to its list). */
export function filterOf(query: RunQuery): ListFilter {
  return {
    ...(query.status !== undefined ? { status: query.status } : {}),
    ...(query.type !== undefined ? { type: query.type } : {}),
    ...Object.fromEntries(Object.entries(query.attributes).map(([k, v]) => [k, { eq: v }])),
  };
}

/** Whether `run` passes the query's filters that the reader does not apply: ID, start time. */
export function matchesQuery(run: DataDirRun, query: RunQuery): boolean {
  return (
    (query.q === undefined || run.id.includes(query.q)) &&
    (query.from === undefined || run.startedAt >= query.from) &&
    (query.to === undefined || run.startedAt < query.to)
  );
}

/**
 * One page of `runs` (newest first, as the reader lists them) for the query, and the cursor of the
 * next page when there is one. A cursor names the last run shown, so runs started meanwhile do not
 * shift the pages after it.
 */
export function pageOf(runs: readonly DataDirRun[], query: RunQuery): { runs: DataDirRun[]; next: string | undefined } {
  const c = query.cursor;
  const kept = runs.filter(
    (r) => matchesQuery(r, query) && (c === undefined || r.startedAt < c.startedAt || (r.startedAt === c.startedAt && r.id > c.id)),
  );
  const page = kept.slice(0, query.limit);
  const last = page.at(-1);
  return { runs: page, next: kept.length > page.length && last !== undefined ? cursorOf(last) : undefined };
}

/** The query's filters as a query string, without its cursor and page size: what a batch acts on. */
export function filterText(query: RunQuery): string {
  const p = new URLSearchParams();
  if (query.q !== undefined) p.set("q", query.q);
  if (query.status !== undefined) p.set("status", query.status);
  if (query.type !== undefined) p.set("type", query.type);
  for (const [k, v] of Object.entries(query.attributes)) p.set(`attr.${k}`, typeof v === "string" ? v : JSON.stringify(v));
  if (query.from !== undefined) p.set("from", String(query.from));
  if (query.to !== undefined) p.set("to", String(query.to));
  return p.toString();
}

/** The runs page's URL for the same filters and page size, starting at `cursor` (the first page when undefined). */
export function pageUrl(query: RunQuery, cursor: string | undefined): string {
  const p = new URLSearchParams(filterText(query));
  p.set("limit", String(query.limit));
  if (cursor !== undefined) p.set("cursor", cursor);
  return `/?${p.toString()}`;
}

/** The cursor of the page that starts after `run`. */
function cursorOf(run: { readonly startedAt: number; readonly id: string }): string {
  return Buffer.from(JSON.stringify([run.startedAt, run.id]), "utf8").toString("base64url");
}

function parseCursor(text: string): { startedAt: number; id: string } {
  try {
    const [startedAt, id] = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as unknown[];
    if (typeof startedAt === "number" && typeof id === "string") return { startedAt, id };
  } catch {
    // Reported below.
  }
  throw new BadRequestError(`cursor '${text}' is not one this server handed out; start from the first page`);
}

function instantOf(text: string, name: string): number | undefined {
  if (text === "") return undefined;
  const ms = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  if (!Number.isFinite(ms))
    throw new BadRequestError(`${name} must be a date and time (2026-01-31T12:00) or ms since the epoch; got '${text}'`);
  return ms;
}

function jsonOrText(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
