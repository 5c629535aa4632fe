import type { Engine } from "@fusee/runtime";

/** One execution of a step body, as the outside world saw it. */
export interface Execution {
  /** Order of execution across the whole schedule. */
  readonly index: number;
  readonly generation: number;
  readonly workflowId: string;
  readonly runId: number;
  readonly name: string;
  readonly key: string;
  readonly attempt: number;
  /** The attempts the step's retry policy allows. */
  readonly tries: number;
  /** Whether the body hangs until its `AbortSignal` fires, and whether it fired. */
  hangs: boolean;
  aborted: boolean;
  /** How the body ended while its engine was alive; `undefined` while it runs or if it never ended. */
  outcome: "ok" | "failed" | undefined;
  /** The runtime gave up on the attempt (a timeout) and began another of the same step in the same engine. */
  superseded: boolean;
  /** The engine died (power loss, failed sync, shutdown) while this execution was its step's latest. */
  interrupted: boolean;
  /**
   * For a failure the engine had time to journal (it failed, and the engine reached a quiet point
   * after): the ledger's length at that point, so later executions can tell it came before them.
   */
  settledAt: number | undefined;
}

/**
 * Every step body execution, keyed by workflow ID, run, step key, attempt and engine generation.
 * Only executions of a live engine are recorded: once an engine is abandoned (a power loss), or
 * shut down, nothing its runs do counts.
 */
export class Ledger {
  readonly executions: Execution[] = [];
  /** Problems a body itself noticed (a step key of another run), reported by the next check. */
  readonly complaints: string[] = [];

  begin(gen: Generation, fields: Pick<Execution, "workflowId" | "runId" | "name" | "key" | "attempt" | "tries">): Execution | undefined {
    if (!gen.alive) return undefined;
    for (const e of this.executions) {
      if (e.key === fields.key && e.generation === gen.n && e.outcome === undefined && !e.interrupted) e.superseded = true;
    }
    const e: Execution = {
      index: this.executions.length,
      generation: gen.n,
      ...fields,
      hangs: false,
      aborted: false,
      outcome: undefined,
      superseded: false,
      interrupted: false,
      settledAt: undefined,
    };
    this.executions.push(e);
    return e;
  }

  end(gen: Generation, e: Execution | undefined, outcome: "ok" | "failed"): void {
    if (e !== undefined && gen.alive && e.outcome === undefined) e.outcome = outcome;
  }

  /** Executions of a step key so far (of live engines): what an outside service has seen of it. */
  seen(key: string): number {
    let n = 0;
    for (const e of this.executions) if (e.key === key) n++;
    return n;
  }

  /** At a quiet point of the live engine of generation `n`: its failures so far had time to reach the journal. */
  settle(n: number): void {
    for (const e of this.executions) {
      if (e.generation === n && e.settledAt === undefined && (e.outcome === "failed" || e.superseded)) e.settledAt = this.executions.length;
    }
  }

  /** The engine of generation `n` died: executions still running there were cut off. */
  died(n: number): void {
    for (const e of this.executions) {
      if (e.generation === n && e.outcome === undefined && !e.superseded) e.interrupted = true;
    }
  }
}

/**
 * One engine's life, from open to crash or shutdown. Workflow instances get theirs injected (each
 * engine resolves workflows from a container holding its own), so a body knows whether its engine
 * still counts and which engine to call.
 */
export class Generation {
  alive = true;
  engine: Engine | undefined;

  constructor(
    readonly n: number,
    readonly ledger: Ledger,
  ) {}
}
