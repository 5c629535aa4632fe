/*
 * The operations on a run that a process forwards to the owner of the run's shard, and how the
 * owner performs each through the engine's ordinary path.
 */
import type { UpdateOptions, StartOptions } from "../../client/types.js";
import { RejectedError } from "../../core/errors.js";
import type { Engine } from "../engine.js";

/** Arguments of each forwarded operation, as sent. */
export interface ForwardedArgs {
  start: [type: string, id: string, input: unknown, options: StartOptions];
  updateWithStart: [type: string, id: string, input: unknown, update: string, arg: unknown, options: StartOptions & { updateId?: string }];
  status: [id: string];
  describe: [id: string];
  statusOf: [id: string];
  detailOf: [id: string];
  awaitResult: [id: string];
  awaitStarted: [id: string];
  signal: [id: string, name: string, value: unknown];
  query: [id: string, name: string, args: readonly unknown[]];
  update: [id: string, name: string, arg: unknown, options: UpdateOptions];
  terminate: [id: string, reason: string];
  cancel: [id: string, reason: string | undefined];
  reset: [id: string, step: string];
  complete: [token: string, value: unknown];
  fail: [token: string, error: unknown];
}

export type ForwardedKind = keyof ForwardedArgs;

/** A forwarded request as its performer sees it. */
export interface RequestInfo {
  readonly id: string;
  /**
   * Set when an earlier owner of the shard may have performed the request and died before
   * answering it: a start or a signal is then looked for in the run's journal before it is
   * performed again. Updates carry their own IDs, which the run deduplicates.
   */
  readonly suspect: boolean;
}

/** Performs a forwarded operation on this process's engine; the answer is what the caller returns. */
export async function perform(engine: Engine, kind: string, args: unknown[], request: RequestInfo): Promise<unknown> {
  const a = args as never;
  switch (kind as ForwardedKind) {
    case "start": {
      const [type, id, input, options] = a as ForwardedArgs["start"];
      if (request.suspect && (await engine.performedRequest(id, request.id))) return undefined;
      await engine.startForwarded(type, id, input, options, request.id);
      return undefined;
    }
    case "updateWithStart": {
      const [type, id, input, update, arg, options] = a as ForwardedArgs["updateWithStart"];
      return (await engine.updateWithStart(type, id, input, update, arg, options)).result;
    }
    case "status":
      return engine.status(...(a as ForwardedArgs["status"]));
    case "describe":
      return engine.describe(...(a as ForwardedArgs["describe"]));
    case "statusOf":
      return engine.statusOf(...(a as ForwardedArgs["statusOf"]));
    case "detailOf":
      return engine.detailOf(...(a as ForwardedArgs["detailOf"]));
    case "awaitResult":
      return engine.awaitResult(...(a as ForwardedArgs["awaitResult"]));
    case "awaitStarted":
      return engine.awaitStarted(...(a as ForwardedArgs["awaitStarted"]));
    case "signal": {
      const [id, name, value] = a as ForwardedArgs["signal"];
      if (request.suspect && (await engine.performedRequest(id, request.id))) return undefined;
      return engine.signalForwarded(id, name, value, request.id);
    }
    case "query":
      return engine.query(...(a as ForwardedArgs["query"]));
    case "update":
      return engine.update(...(a as ForwardedArgs["update"]));
    case "terminate":
      return engine.terminate(...(a as ForwardedArgs["terminate"]));
    case "cancel":
      return engine.cancel(...(a as ForwardedArgs["cancel"]));
    case "reset":
      return engine.reset(...(a as ForwardedArgs["reset"]));
    case "complete":
      return engine.complete(...(a as ForwardedArgs["complete"]));
    case "fail":
      return engine.fail(...(a as ForwardedArgs["fail"]));
    default:
      throw new RejectedError(`a forwarded request has the unknown kind '${kind}'`);
  }
}
