import { timingSafeEqual } from "node:crypto";
import { FuseeError, NotFoundError, RejectedError } from "@fusee/runtime";
import { BadRequestError } from "./bad-request-error.js";

/** What the page's buttons do to a run; given to the server only with `fusee ui --allow-actions`. */
export interface UiActions {
  signal(id: string, name: string, value: unknown): Promise<void>;
  cancel(id: string, reason: string): Promise<void>;
  terminate(id: string, reason: string): Promise<void>;
  reset(id: string, step: string): Promise<void>;
}

/** The answer to a POST. */
export interface ActionResponse {
  readonly status: number;
  readonly body: { ok: true } | { ok: false; error: { code: string; message: string } };
}

const ACTIONS = new Set(["signal", "cancel", "terminate", "reset"]);
const MAX_BODY = 1 << 20;

/** `/api/runs/<id>/<action>` split into the ID and the action, or `undefined` for another path. */
export function actionPath(path: string): { id: string; action: string } | undefined {
  const m = /^\/api\/runs\/([^/]+)\/([a-z]+)$/.exec(path);
  if (m === null || !ACTIONS.has(m[2] as string)) return undefined;
  let id: string;
  try {
    id = decodeURIComponent(m[1] as string);
  } catch {
    return undefined;
  }
  return { id, action: m[2] as string };
}

/**
 * Performs a POSTed action. Refused with 403 when actions are off or the request does not carry
 * this process's token (in the `x-fusee-token` header): a page of another site can neither read the
 * token nor send the header without a preflight this server never grants.
 */
export async function performAction(
  actions: UiActions | undefined,
  token: string | undefined,
  given: string | undefined,
  target: { id: string; action: string },
  body: string,
): Promise<ActionResponse> {
  if (actions === undefined || token === undefined) {
    return refuse(
      403,
      "FUSEE_ACTIONS_OFF",
      "actions are off: start the UI with fusee ui --allow-actions (it then writes the data directory)",
    );
  }
  if (given === undefined || !sameToken(given, token)) {
    return refuse(403, "FUSEE_BAD_TOKEN", "the request does not carry this server's token (x-fusee-token); reload the page");
  }
  try {
    const args = parseBody(body);
    const text = (name: string, fallback?: string): string => {
      // An empty field of the page's form means "not given".
      const v = args[name] === "" || args[name] === undefined ? fallback : args[name];
      if (typeof v !== "string" || v === "") throw new BadRequestError(`${target.action} needs "${name}" (a non-empty string)`);
      return v;
    };
    if (target.action === "signal") await actions.signal(target.id, text("name"), signalValue(args.value));
    else if (target.action === "cancel") await actions.cancel(target.id, text("reason", "cancelled from fusee ui"));
    else if (target.action === "terminate") await actions.terminate(target.id, text("reason", "terminated from fusee ui"));
    else await actions.reset(target.id, text("step"));
    return { status: 200, body: { ok: true } };
  } catch (e) {
    const status = e instanceof BadRequestError || e instanceof RejectedError ? 400 : e instanceof NotFoundError ? 404 : 500;
    return refuse(status, e instanceof FuseeError ? e.code : "FUSEE_INTERNAL", (e as Error)?.message ?? String(e));
  }
}

/** Reads a request body up to 1 MiB. */
export function readBody(request: AsyncIterable<unknown>): Promise<string> {
  return (async () => {
    let size = 0;
    const chunks: Buffer[] = [];
    for await (const chunk of request) {
      const b = chunk as Buffer;
      size += b.length;
      if (size > MAX_BODY) throw new BadRequestError("the request body is over 1 MiB");
      chunks.push(b);
    }
    return Buffer.concat(chunks).toString("utf8");
  })();
}

function parseBody(body: string): Record<string, unknown> {
  if (body.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new BadRequestError("the request body must be a JSON object");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new BadRequestError("the request body must be a JSON object");
  return parsed as Record<string, unknown>;
}

/** A signal's value as typed in the page: JSON when it is JSON, the text itself otherwise, nothing when empty. */
function signalValue(value: unknown): unknown {
  if (typeof value !== "string") return value;
  if (value.trim() === "") return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function refuse(status: number, code: string, message: string): ActionResponse {
  return { status, body: { ok: false, error: { code, message } } };
}
