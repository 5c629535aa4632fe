import { timingSafeEqual } from "node:crypto";
import { FuseeError, NotFoundError, RejectedError } from "@fusee/runtime";
import { BadRequestError } from "./bad-request-error.js";
import { runBatch, type BatchAction, type BatchFailure } from "./batch-actions.js";
import type { ActionsState } from "./html.js";
import type { ReaderSource } from "./routes.js";
import type { UiActions } from "./ui-actions.js";

/** The answer to a POST: for a batch, how many runs it acted on and the ones it could not. */
export interface ActionResponse {
  readonly status: number;
  readonly body:
    | { ok: true; summary?: string; done?: number; failed?: readonly BatchFailure[] }
    | { ok: false; error: { code: string; message: string } };
}

/** What a POST asks for: an action on one run, or on every unfinished run a filter matches. */
export type ActionTarget =
  { readonly kind: "run"; readonly id: string; readonly action: string } | { readonly kind: "batch"; readonly action: BatchAction };

const ACTIONS = new Set(["signal", "cancel", "terminate", "reset"]);
const BATCH_ACTIONS = new Set<string>(["cancel", "terminate"] satisfies BatchAction[]);
const MAX_BODY = 1 << 20;

/** `/api/runs/<id>/<action>` or `/api/batch/<action>` as a target, or `undefined` for another path. */
export function actionPath(path: string): ActionTarget | undefined {
  const batch = /^\/api\/batch\/([a-z]+)$/.exec(path);
  if (batch !== null) return BATCH_ACTIONS.has(batch[1] as string) ? { kind: "batch", action: batch[1] as BatchAction } : undefined;
  const m = /^\/api\/runs\/([^/]+)\/([a-z]+)$/.exec(path);
  if (m === null || !ACTIONS.has(m[2] as string)) return undefined;
  let id: string;
  try {
    id = decodeURIComponent(m[1] as string);
  } catch {
    return undefined;
  }
  return { kind: "run", id, action: m[2] as string };
}

/**
 * Performs a POSTed action. Refused with 403 when actions are off or the request does not carry
 * this process's token (in the `x-fusee-token` header): a page of another site can neither read the
 * token nor send the header without a preflight this server never grants. Refused with 409 when
 * actions were asked for but this process cannot write the directory.
 */
export async function performAction(
  actions: UiActions | undefined,
  state: ActionsState,
  given: string | undefined,
  target: ActionTarget,
  body: string,
  open: ReaderSource,
): Promise<ActionResponse> {
  if (state.kind === "unavailable") {
    return refuse(
      409,
      "FUSEE_ACTIONS_UNAVAILABLE",
      `this process cannot write the data directory, so it cannot act on runs: ${state.reason}`,
    );
  }
  if (state.kind === "off" || actions === undefined) {
    return refuse(
      403,
      "FUSEE_ACTIONS_OFF",
      "actions are off: start the UI with fusee ui --allow-actions (it then writes the data directory)",
    );
  }
  if (given === undefined || !sameToken(given, state.token)) {
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
    if (target.kind === "batch") {
      const filter = typeof args["filter"] === "string" ? args["filter"] : "";
      const fallback = target.action === "cancel" ? "cancelled from fusee ui" : "terminated from fusee ui";
      return { status: 200, body: { ok: true, ...(await runBatch(actions, open, filter, target.action, text("reason", fallback))) } };
    }
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
