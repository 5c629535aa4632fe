/*
 * Where each call of the run service is performed: the shard its arguments name. A cluster sends a
 * call to the process holding that shard; this table is the only place that says how to find it,
 * so a new call is routed by adding its line (the compiler insists on one per call).
 */
import { parseCompletionToken } from "../workflow/completion-token.js";
import type { RequestContext, RunCall, RunService } from "./run-service.js";

/** How a call's arguments name its shard. */
export type Route =
  /** A workflow ID at argument `at`. */
  | { readonly by: "run"; readonly at: number }
  /** A completion token at argument `at`: the ID of the run that issued it. */
  | { readonly by: "token"; readonly at: number }
  /** The shard number itself at argument `at`. */
  | { readonly by: "shard"; readonly at: number }
  /** A schedule's name, or a debounce or batch key, at argument `at`. */
  | { readonly by: "flow"; readonly family: "schedule" | "debounce" | "batch"; readonly at: number };

/** A call's route, and what performing it elsewhere requires. */
export interface CallRoute {
  readonly route: Route;
  /**
   * The call changes a run: the owner performing it for another process names the request in the
   * record it appends, so a next owner finds it performed instead of performing it twice.
   */
  readonly changes?: true;
  /** The call only waits or is idempotent (by an ID): when its shard moves meanwhile, it is asked again of the next owner. */
  readonly retriesOnMove?: true;
  /**
   * The argument that names the call so that performing it again does nothing (an event's ID, a
   * trigger's request): the owner performing it for another process fills it with the request's ID
   * when the caller left it out, so a next owner, asked the same request, finds it performed.
   */
  readonly namedBy?: number;
}

/** The calls that change a run (`CallRoute.changes`): the owner performs them with the request they answer. */
export type ChangingCall = "start" | "signalWithStart" | "signal" | "terminate" | "cancel" | "reset" | "complete" | "fail" | "startChild";

/** The calls that change a run, as the owner performs them for another process: with the request they perform. */
export type PerformsRequests = {
  readonly [C in ChangingCall]: (...args: [...Parameters<RunService[C]>, context?: RequestContext]) => ReturnType<RunService[C]>;
};

const run = (at: number): Route => ({ by: "run", at });

export const ROUTES: { readonly [C in RunCall]: C extends ChangingCall ? CallRoute & { changes: true } : CallRoute & { changes?: never } } =
  {
    start: { route: run(1), changes: true },
    updateWithStart: { route: run(1), retriesOnMove: true },
    signalWithStart: { route: run(1), changes: true },
    // Deduplicated by its own request ID, so a copy asked again of a shard's next owner is harmless.
    deliver: { route: run(0), retriesOnMove: true },
    awaitResult: { route: run(0), retriesOnMove: true },
    awaitStarted: { route: run(0), retriesOnMove: true },
    status: { route: run(0) },
    describe: { route: run(0) },
    signal: { route: run(0), changes: true },
    query: { route: run(0) },
    update: { route: run(0), retriesOnMove: true },
    terminate: { route: run(0), changes: true },
    cancel: { route: run(0), changes: true },
    reset: { route: run(0), changes: true },
    complete: { route: { by: "token", at: 0 }, changes: true },
    fail: { route: { by: "token", at: 0 }, changes: true },
    startChild: { route: run(1), changes: true },
    listShard: { route: { by: "shard", at: 0 } },
    schedule: { route: { by: "flow", family: "schedule", at: 0 } },
    scheduleOp: { route: { by: "flow", family: "schedule", at: 0 }, namedBy: 3 },
    listSchedules: { route: { by: "shard", at: 0 } },
    debounce: { route: { by: "flow", family: "debounce", at: 1 }, namedBy: 4 },
    batch: { route: { by: "flow", family: "batch", at: 1 }, namedBy: 4 },
  };

/** The workflow ID a run-changing call is about (where the owner looks for its request). */
export function targetRun(call: RunCall, args: readonly unknown[]): string | undefined {
  const { route } = ROUTES[call];
  if (route.by === "run") return args[route.at] as string;
  if (route.by === "token") return parseCompletionToken(args[route.at] as string).workflowId;
  return undefined;
}

/** The call's arguments as the owner performs them for request `request` (see `CallRoute.namedBy`). */
export function namedArgs(call: RunCall, args: readonly unknown[], request: string): readonly unknown[] {
  const at = ROUTES[call].namedBy;
  if (at === undefined || args[at] !== undefined) return args;
  const named = [...args];
  named[at] = request;
  return named;
}

/** Performs `call` on `service` with its arguments as sent. */
export function invoke(service: RunService, call: RunCall, args: readonly unknown[]): Promise<unknown> {
  return (service[call] as (...a: unknown[]) => Promise<unknown>).call(service, ...args);
}

/** Performs a call that changes a run on the runs of its shard, for another process whose request it answers. */
export function perform(runs: PerformsRequests, call: ChangingCall, args: readonly unknown[], context: RequestContext): Promise<unknown> {
  return (runs[call] as (...a: unknown[]) => Promise<unknown>).call(runs, ...args, context);
}
