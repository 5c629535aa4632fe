/*
 * The operations on a run that a process forwards to the owner of the run's shard, and how the
 * owner performs each through the engine's ordinary path.
 */
import type { ListFilter, UpdateOptions, StartOptions } from "../../client/types.js";
import { RejectedError } from "../../core/errors.js";
import type { Engine } from "../engine.js";
import { Batch, Debounce } from "../flow-rules.js";
import type { ScheduleOp } from "../schedule-handle.js";
import type { ScheduleSpec } from "../schedule-spec.js";
import { parseCompletionToken } from "../../workflow/completion-token.js";

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
  listShard: [shard: number, filter: ListFilter, limit: number];
  startChild: [type: string, id: string, input: unknown, parent: { id: string; runId: number; seq: number }];
  schedule: [name: string, spec: ScheduleSpec];
  scheduleOp: [name: string, op: ScheduleOp, args: readonly number[]];
  debounce: [type: string, key: string, input: unknown, rule: { delayMs: number; maxWaitMs: number | undefined }, eventId: string | undefined];
  batch: [type: string, key: string, event: unknown, rule: { size: number; timeoutMs: number }, eventId: string | undefined];
}

export type ForwardedKind = keyof ForwardedArgs;

/** The operations that change a run, as the engine performs them for one forwarded request. */
export interface RequestOperations {
  start(...args: ForwardedArgs["start"]): Promise<void>;
  signal(...args: ForwardedArgs["signal"]): Promise<void>;
  terminate(...args: ForwardedArgs["terminate"]): Promise<void>;
  cancel(...args: ForwardedArgs["cancel"]): Promise<void>;
  reset(...args: ForwardedArgs["reset"]): Promise<void>;
  complete(...args: ForwardedArgs["complete"]): Promise<void>;
  fail(...args: ForwardedArgs["fail"]): Promise<void>;
  /** Resolves with the child's run number. */
  startChild(...args: ForwardedArgs["startChild"]): Promise<number>;
}

/** A forwarded request as its performer sees it. */
export interface RequestInfo {
  readonly id: string;
  /**
   * Set when an earlier owner of the shard may have performed the request and died before
   * answering it: an operation that changes a run is then looked for in the run's journal before
   * it is performed again. Updates carry their own IDs, which the run deduplicates.
   */
  readonly suspect: boolean;
}

/** The workflow ID a run-changing request is about. */
function targetOf(kind: keyof RequestOperations, args: unknown[]): string {
  if (kind === "complete" || kind === "fail") return parseCompletionToken(args[0] as string).workflowId;
  return (kind === "start" || kind === "startChild" ? args[1] : args[0]) as string;
}

const CHANGES = new Set<string>(["start", "signal", "terminate", "cancel", "reset", "complete", "fail", "startChild"]);

/** Performs a forwarded operation on this process's engine; the answer is what the caller returns. */
export async function perform(engine: Engine, kind: string, args: unknown[], request: RequestInfo): Promise<unknown> {
  if (CHANGES.has(kind)) {
    const change = kind as keyof RequestOperations;
    const target = targetOf(change, args);
    if (request.suspect && (await engine.performedRequest(target, request.id))) {
      return change === "startChild" ? (await engine.status(target))?.runId : undefined;
    }
    const operation = engine.asRequest(request.id)[change] as (...a: unknown[]) => Promise<unknown>;
    const answer = await operation(...args);
    return change === "startChild" ? answer : undefined;
  }
  const a = args as never;
  switch (kind as ForwardedKind) {
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
    case "query":
      return engine.query(...(a as ForwardedArgs["query"]));
    case "update":
      return engine.update(...(a as ForwardedArgs["update"]));
    case "listShard":
      return engine.listShard(...(a as ForwardedArgs["listShard"]));
    case "schedule": {
      const [name, spec] = a as ForwardedArgs["schedule"];
      await engine.schedule(name, spec);
      return undefined;
    }
    case "scheduleOp":
      return engine.scheduleOp(...(a as ForwardedArgs["scheduleOp"]));
    case "debounce": {
      const [type, key, input, rule, eventId] = a as ForwardedArgs["debounce"];
      const debounce = rule.maxWaitMs === undefined ? Debounce.of(rule.delayMs) : Debounce.of(rule.delayMs).maxWait(rule.maxWaitMs);
      return (await engine.debounce(type, key, input, debounce, eventId === undefined ? {} : { eventId })).id;
    }
    case "batch": {
      const [type, key, event, rule, eventId] = a as ForwardedArgs["batch"];
      return (await engine.batch(type, key, event, Batch.of(rule.size, rule.timeoutMs), eventId === undefined ? {} : { eventId })).id;
    }
    default:
      throw new RejectedError(`a forwarded request has the unknown kind '${kind}'`);
  }
}
