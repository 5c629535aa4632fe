import { FuseeError, NotFoundError, type DataDirReader } from "@fusee/runtime";
import { toJson } from "../data-dir.js";
import { BadRequestError } from "./bad-request-error.js";
import { errorPage } from "./error-page.js";
import type { PageEnv } from "./html.js";
import { runPage } from "./run-page.js";
import { filterOf, matchesQuery, pageOf, parseRunQuery } from "./run-query.js";
import { loadRunView, type CodeReplay } from "./run-view.js";
import { runsPage } from "./runs-page.js";
import { schedulesPage } from "./schedules-page.js";

/** What the server sends back for a request. */
export interface UiResponse {
  readonly status: number;
  readonly type: "html" | "json";
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Opens a fresh reader of the data directory. Each request gets its own, so it sees what the engine
 * running on the directory has written up to that moment.
 */
export type ReaderSource = () => Promise<DataDirReader>;

/** Where the pages' data comes from. */
export interface UiData {
  readonly open: ReaderSource;
  /** Replays a run through the workflow code given with `--workflows`, for what it waits on. */
  readonly replay?: CodeReplay;
}

/**
 * Answers a GET request of the UI: `/`, `/runs/<id>`, `/schedules` as pages, and `/api/runs`
 * (a `link` header with `rel="next"` when there is a next page), `/api/runs/<id>`, `/api/schedules` as JSON. Errors come back as a page, or as
 * `{ ok: false, error: { code, message } }` under `/api/`: 400 for a bad query, 404 for an unknown
 * run or path, 500 when the directory cannot be read.
 *
 * @example
 * const response = await route("/api/runs?status=failed", { open: () => DataDirReader.open("./data") }, env);
 */
export async function route(target: string, data: UiData, env: PageEnv): Promise<UiResponse> {
  const api = target.startsWith("/api/");
  try {
    // Split by hand rather than through URL, which would resolve dot segments of encoded IDs.
    const mark = target.indexOf("?");
    const path = mark < 0 ? target : target.slice(0, mark);
    const params = new URLSearchParams(mark < 0 ? "" : target.slice(mark + 1));
    if (path === "/" || path === "/api/runs") {
      const query = parseRunQuery(params);
      return await withReader(data.open, (reader) => {
        const all = reader.list(filterOf(query), Number.MAX_SAFE_INTEGER);
        const { runs, next } = pageOf(all, query);
        if (!api) {
          const unfinished = all.filter((r) => r.endedAt === undefined && matchesQuery(r, query)).length;
          return page(200, runsPage({ runs, query, dir: reader.dir, next, unfinished }, env));
        }
        // The body stays a plain array; the next page is a link, as in RFC 8288.
        return { ...json(200, runs), ...(next !== undefined ? { headers: { link: `<${nextLink(params, next)}>; rel="next"` } } : {}) };
      });
    }
    if (path === "/schedules" || path === "/api/schedules") {
      noQuery(params);
      return await withReader(data.open, (reader) => {
        const schedules = reader.schedules();
        return api ? json(200, schedules) : page(200, schedulesPage(schedules, env));
      });
    }
    const runPrefix = api ? "/api/runs/" : "/runs/";
    if (path.startsWith(runPrefix) && path.length > runPrefix.length) {
      noQuery(params);
      const id = decodeId(path.slice(runPrefix.length));
      return await withReader(data.open, async (reader) => {
        if (!api) return page(200, runPage(await loadRunView(reader, id, data.replay), env));
        const run = reader.status(id);
        if (run === undefined) throw new NotFoundError(`no run has the workflow ID '${id}' in ${reader.dir}`);
        const journal = await reader.export(id);
        return json(200, { ...run, records: journal?.records ?? [] });
      });
    }
    throw new NotFoundError(
      `nothing is at ${path}; the pages are /, /runs/<id> and /schedules, the JSON is under /api/runs and /api/schedules`,
    );
  } catch (e) {
    return failure(e, api, env);
  }
}

/** Runs `use` with a fresh reader of the directory, closed afterwards. */
export async function withReader<T>(open: ReaderSource, use: (reader: DataDirReader) => T | Promise<T>): Promise<T> {
  const reader = await open();
  try {
    return await use(reader);
  } finally {
    await reader.close();
  }
}

function decodeId(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw new BadRequestError(`the workflow ID in the path is not valid percent-encoding: ${encoded}`);
  }
}

function noQuery(params: URLSearchParams): void {
  const key = params.keys().next();
  if (key.done !== true) throw new BadRequestError(`unknown query parameter '${key.value}'; this page takes none`);
}

function failure(e: unknown, api: boolean, env: PageEnv): UiResponse {
  const status = e instanceof BadRequestError ? 400 : e instanceof NotFoundError ? 404 : 500;
  const message = e instanceof Error ? e.message : String(e);
  const code = e instanceof FuseeError ? e.code : "FUSEE_INTERNAL";
  if (api) return { status, type: "json", body: `${JSON.stringify({ ok: false, error: { code, message } })}\n` };
  return page(status, errorPage(status, message, env));
}

function json(status: number, value: unknown): UiResponse {
  return { status, type: "json", body: `${toJson(value, 2)}\n` };
}

function page(status: number, body: string): UiResponse {
  return { status, type: "html", body };
}

/** `/api/runs` with the same query, starting at `cursor`. */
function nextLink(params: URLSearchParams, cursor: string): string {
  const p = new URLSearchParams(params);
  p.set("cursor", cursor);
  return `/api/runs?${p.toString()}`;
}
