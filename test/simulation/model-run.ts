import type { ClosePolicy, Program, SimResult } from "./program.js";

export type WorkflowType = "Sim" | "SimLate";

export type ModelStatus = "running" | "ok" | "failed" | "cancelled" | "terminated";

/** What a client call should give, as far as the model can tell. */
export type Expectation =
  | { readonly outcome: "any" }
  | { readonly outcome: "ok"; readonly value?: unknown }
  | { readonly outcome: "error"; readonly errorClass: string };

export const ANY: Expectation = { outcome: "any" };
export const OK: Expectation = { outcome: "ok" };
export const error = (errorClass: string): Expectation => ({ outcome: "error", errorClass });

export type Block =
  | { readonly on: "none" }
  | { readonly on: "sleep"; readonly at: number }
  | { readonly on: "wait"; readonly name: string; readonly at?: number }
  | { readonly on: "cond"; readonly flag: string; readonly at?: number }
  /** `at`: when the wait times out, for a child started with a timeout. */
  | { readonly on: "child"; readonly childId: string; readonly at?: number }
  /** A step whose attempts and back-offs end at `at`, with this outcome. */
  | { readonly on: "step"; readonly at: number; readonly ok: boolean; readonly errorClass: string }
  | { readonly on: "hang" };

/** The model's view of the current run of one workflow ID. */
export interface ModelRun {
  readonly id: string;
  runId: number | undefined;
  prog: Program;
  pc: number;
  obs: string[];
  total: number;
  flags: Set<string>;
  mailbox: Map<string, (number | string)[]>;
  /** Outcomes of updates by update ID (a repeated ID is answered from them): this run's and those of earlier runs it continues. */
  updates: Map<string, Expectation>;
  /** Search attributes. */
  attrs: Record<string, unknown>;
  /** The workflow type its client start named; what its code starts is `Sim`. */
  type: WorkflowType;
  status: ModelStatus;
  value: SimResult | undefined;
  errorClass: string | undefined;
  /** The model follows this run exactly; once false, only journal-level properties are checked for it. */
  determined: boolean;
  /** Whether the run exists: `maybe` after a start that a crash left in doubt. */
  exists: true | "maybe";
  block: Block;
  parent: { readonly id: string; readonly runId: number | undefined } | undefined;
  /** Children this run started, with their close policies. */
  children: Map<string, ClosePolicy>;
  /** Programs a start left in doubt may have given the ID's run instead of `prog`. */
  maybe: Program[];
  /** The virtual time the run ended at, once it did. */
  endedAt?: number;
  /**
   * The run whose code started it (a child or a step's start). Until the engine has shown this run,
   * it exists only as surely as its origin's progress: a power loss may undo both.
   */
  origin?: string;
  /** Set when its parent was waiting for its result and took it: its end came first for sure. */
  reported?: boolean;
  /** Set when it caught a cancellation and waits on for mailbox `b` (a program that lingers): the next wake-up ends it. */
  lingering?: boolean;
}

export function freshRun(id: string, prog: Program, runId: number | undefined, parent: ModelRun["parent"]): ModelRun {
  return {
    id,
    runId,
    prog,
    pc: 0,
    obs: [],
    total: 0,
    flags: new Set(),
    mailbox: new Map(),
    updates: new Map(),
    attrs: {},
    type: "Sim",
    status: "running",
    value: undefined,
    errorClass: undefined,
    determined: true,
    exists: true,
    block: { on: "none" },
    parent,
    children: new Map(),
    maybe: [],
  };
}

export function childObservation(pc: number, child: ModelRun): string {
  if (child.status === "ok") return `c${pc}=ok:${JSON.stringify(child.value)}`;
  return `c${pc}=${child.status}`;
}

/** The IDs a program (its next program's included) sends messages to; `starts`: only messages that may start a run. */
export function messageTargets(prog: Program, starts: boolean): string[] {
  const out: string[] = [];
  for (const p of [prog, prog.next])
    for (const i of p?.body ?? []) if (i.k === "send" && (!starts || i.op === "start" || i.op === "sws")) out.push(i.to);
  return out;
}
