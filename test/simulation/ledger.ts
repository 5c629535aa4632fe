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
  /** Problems a body itself noticed, reported by the next check. */
  readonly complaints: string[] = [];
  /**
   * What workflow code read of the context at each place, as the first execution there read it, and
   * whether that run is durable for sure (a check of a live engine, which waits for quiet, came since).
   */
  private readonly observations = new Map<string, { value: string; generation: number; confirmed: boolean }>();

  /**
   * Workflow code at `where` read `value` (random numbers, a UUID, the journal's size): every replay
   * there must read what the first execution read, whichever engine runs it. A run whose start a power
   * loss undid is another run under the same number: what it read before does not count.
   */
  observe(gen: Generation, where: string, value: string): void {
    // An abandoned engine's runs may be ones a power loss undid; the checks' own replays (generation 0) count.
    if (!gen.alive && gen.n !== 0) return;
    const [r, uuid] = value.split(" ");
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(uuid ?? "") || !(Number(r) >= 0 && Number(r) < 1))
      this.complaints.push(`${where} read random() ${r} and uuid() ${uuid}: not a number in [0, 1) and a version 4 UUID`);
    const first = this.observations.get(where);
    if (first === undefined || (!first.confirmed && first.generation !== gen.n)) {
      this.observations.set(where, { value, generation: gen.n, confirmed: gen.n === 0 });
      return;
    }
    if (first.value !== value)
      this.complaints.push(`${where} read random(), uuid(), journalSize() as ${value}; its first execution read ${first.value}`);
  }

  /** A check of the live engine of generation `n`, at a quiet point: the runs its code ran in are durable. */
  confirm(n: number): void {
    for (const o of this.observations.values()) if (o.generation === n) o.confirmed = true;
  }

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
  /**
   * The engine, once `Engine.open` returned it. Open resumes unfinished runs before it returns, so a
   * step body that calls the engine may begin before anyone holds it and waits here.
   */
  readonly engine: Promise<Engine>;
  private resolveEngine: (engine: Engine) => void = () => undefined;

  constructor(
    readonly n: number,
    readonly ledger: Ledger,
  ) {
    this.engine = new Promise((resolve) => (this.resolveEngine = resolve));
  }

  /** `Engine.open` returned this generation's engine. */
  opened(engine: Engine): void {
    this.resolveEngine(engine);
  }
}
