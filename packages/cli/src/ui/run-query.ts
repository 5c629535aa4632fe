import type { ListFilter, RunStatusValue } from "@fusee/runtime";
import { BadRequestError } from "./bad-request-error.js";

/** The statuses a data directory reader reports: unfinished runs all show as `running`. */
export const RUN_STATUSES: readonly RunStatusValue[] = ["running", "ok", "failed", "cancelled", "terminated"];

const DEFAULT_LIMIT = 100;
const PARAMETERS = new Set(["status", "type", "limit"]);

/** The query string of the runs page and `/api/runs`: `?status=failed&type=Pay&limit=20`. */
export interface RunQuery {
  readonly status?: RunStatusValue;
  readonly type?: string;
  readonly limit: number;
}

/**
 * Reads the runs query. An empty value means "any", as the page's form sends it.
 *
 * @throws BadRequestError on an unknown or repeated parameter, an unknown status or a bad limit.
 * @example
 * parseRunQuery(new URLSearchParams("status=failed")) // { status: "failed", limit: 100 }
 */
export function parseRunQuery(params: URLSearchParams): RunQuery {
  for (const key of new Set(params.keys())) {
    if (!PARAMETERS.has(key)) throw new BadRequestError(`unknown query parameter '${key}'; the runs take status, type and limit`);
    if (params.getAll(key).length > 1) throw new BadRequestError(`query parameter '${key}' is given more than once`);
  }
  const status = params.get("status") ?? "";
  const type = params.get("type") ?? "";
  const limitText = params.get("limit") ?? "";
  if (status !== "" && !RUN_STATUSES.includes(status as RunStatusValue)) {
    throw new BadRequestError(`unknown status '${status}'; use one of ${RUN_STATUSES.join(", ")}`);
  }
  const limit = limitText === "" ? DEFAULT_LIMIT : Number(limitText);
  if (!/^\d+$/.test(limitText === "" ? "0" : limitText) || !Number.isSafeInteger(limit)) {
    throw new BadRequestError(`limit must be a whole number ≥ 0; got '${limitText}'`);
  }
  return { ...(status !== "" ? { status: status as RunStatusValue } : {}), ...(type !== "" ? { type } : {}), limit };
}

/** The reader's filter for a query. */
export function filterOf(query: RunQuery): ListFilter {
  return { ...(query.status !== undefined ? { status: query.status } : {}), ...(query.type !== undefined ? { type: query.type } : {}) };
}
