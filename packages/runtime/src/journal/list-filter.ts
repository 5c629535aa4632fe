import { RejectedError } from "../core/errors.js";
import { isRunStatus, RUN_STATUSES } from "../core/status.js";
import type { FieldFilter, ListFilter, RunStatus } from "../client/types.js";

const OPERATORS = new Set(["eq", "ne", "gt", "gte", "lt", "lte", "in", "has"]);
const BUILT_IN = new Set(["type", "status", "id", "runId", "startedAt", "endedAt"]);

function isOperatorObject(v: unknown): v is FieldFilter {
  return (
    v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 0 && Object.keys(v).every((k) => OPERATORS.has(k))
  );
}

/** Checks a `listWhere` filter once, before any run is looked at. */
export function checkFilter(filter: ListFilter): void {
  if (filter === null || typeof filter !== "object" || Array.isArray(filter)) {
    throw new RejectedError("listWhere needs an object of field names to values or operators { eq, ne, gt, gte, lt, lte, in, has }");
  }
  for (const [field, cond] of Object.entries(filter)) {
    if (cond !== null && typeof cond === "object" && !Array.isArray(cond) && !(cond instanceof Date)) {
      const bad = Object.keys(cond).filter((k) => !OPERATORS.has(k));
      if (bad.length > 0)
        throw new RejectedError(
          `listWhere: field '${field}' uses unknown operator(s) ${bad.join(", ")}; use eq, ne, gt, gte, lt, lte, in, has`,
        );
      const inList = (cond as FieldFilter).in;
      if (inList !== undefined && !Array.isArray(inList)) throw new RejectedError(`listWhere: field '${field}': 'in' needs an array`);
    }
    if (field === "status") checkStatuses(cond);
  }
}

/**
 * A status no run can have would match nothing, silently: a misspelt `failed` must not read as
 * "no run failed".
 */
function checkStatuses(cond: unknown): void {
  const named = isOperatorObject(cond) ? [cond.eq, cond.ne, ...(Array.isArray(cond.in) ? cond.in : [])] : [cond];
  const unknown = named.filter((s) => s !== undefined && !isRunStatus(s));
  if (unknown.length > 0) {
    throw new RejectedError(
      `listWhere: no run has the status ${unknown.map((s) => JSON.stringify(s)).join(", ")}; a status is one of ${RUN_STATUSES.join(", ")}`,
    );
  }
}

function fieldOf(run: RunStatus, field: string): unknown {
  if (BUILT_IN.has(field)) return (run as unknown as Record<string, unknown>)[field];
  return run.attributes[field];
}

function same(a: unknown, b: unknown): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  return a === b;
}

function compare(a: unknown, b: unknown): number | undefined {
  const x = a instanceof Date ? a.getTime() : a;
  const y = b instanceof Date ? b.getTime() : b;
  if (typeof x === "number" && typeof y === "number") return x - y;
  if (typeof x === "string" && typeof y === "string") return x < y ? -1 : x > y ? 1 : 0;
  return undefined;
}

/** A filter checked once and turned into a predicate over a run's fields. */
export type FieldPredicate = (field: (name: string) => unknown) => boolean;

/**
 * Compiles a checked filter once per query, so each run costs only its comparisons: no status
 * object is built for a run that does not match.
 */
export function compileFilter(filter: ListFilter): FieldPredicate {
  const tests = Object.entries(filter).map(([name, cond]): ((field: (name: string) => unknown) => boolean) => {
    if (!isOperatorObject(cond)) return (field) => same(field(name), cond);
    const checks: Array<(value: unknown) => boolean> = [];
    if ("eq" in cond) checks.push((v) => same(v, cond.eq));
    if ("ne" in cond) checks.push((v) => !same(v, cond.ne));
    if ("has" in cond) checks.push((v) => Array.isArray(v) && v.some((x) => same(x, cond.has)));
    if (cond.in !== undefined) {
      const list = cond.in;
      checks.push((v) => list.some((x) => same(v, x)));
    }
    const ordered: Array<[keyof FieldFilter, (c: number) => boolean]> = [
      ["gt", (c) => c > 0],
      ["gte", (c) => c >= 0],
      ["lt", (c) => c < 0],
      ["lte", (c) => c <= 0],
    ];
    for (const [op, test] of ordered) {
      if (!(op in cond)) continue;
      const bound = cond[op];
      checks.push((v) => {
        const c = compare(v, bound);
        return c !== undefined && test(c);
      });
    }
    return (field) => {
      const v = field(name);
      return checks.every((check) => check(v));
    };
  });
  return (field) => tests.every((t) => t(field));
}

/** True when a run matches every field of the filter. */
export function matches(run: RunStatus, filter: ListFilter): boolean {
  return compileFilter(filter)((name) => fieldOf(run, name));
}
