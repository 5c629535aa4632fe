import { randomBytes } from "node:crypto";
import { RejectedError } from "../core/errors.js";

/** What a completion token says about where it belongs. */
export interface TokenAddress {
  readonly workflowId: string;
  readonly runId: number;
}

const PREFIX = "fusee1";

/**
 * A token for `ctx.awaitCompletion`: it names the run (so any process can route it) and carries a
 * random part, so tokens cannot be guessed. Each attempt of the sending step makes a new token; the
 * journal keeps the one whose attempt succeeded.
 */
export function makeCompletionToken(workflowId: string, runId: number, stepKey: string, attempt: number): string {
  const address = Buffer.from(JSON.stringify({ w: workflowId, r: runId, k: stepKey, a: attempt })).toString("base64url");
  return `${PREFIX}.${address}.${randomBytes(16).toString("base64url")}`;
}

/** Reads the run a token belongs to, or a `RejectedError` for anything that is not a fusee token. */
export function parseCompletionToken(token: unknown): TokenAddress {
  if (typeof token !== "string")
    throw new RejectedError(`a completion token must be a string; got ${typeof token}`, { reason: "invalid-token" });
  const [prefix, address] = token.split(".");
  try {
    if (prefix !== PREFIX || address === undefined) throw new Error("bad prefix");
    const parsed = JSON.parse(Buffer.from(address, "base64url").toString("utf8")) as { w?: unknown; r?: unknown };
    if (typeof parsed.w !== "string" || typeof parsed.r !== "number") throw new Error("bad address");
    return { workflowId: parsed.w, runId: parsed.r };
  } catch {
    throw new RejectedError(`'${token.slice(0, 40)}' is not a completion token issued by ctx.awaitCompletion`, { reason: "invalid-token" });
  }
}
