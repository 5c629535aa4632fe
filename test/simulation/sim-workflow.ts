import "reflect-metadata";
import {
  AlreadyExistsError,
  CancelledError,
  Ctx,
  Query,
  RejectedError,
  RetryPolicy,
  Signal,
  TerminatedError,
  TimeoutError,
  Update,
  Workflow,
  WorkflowFailedError,
  type StepOptions,
} from "@fusee/runtime";
import { Generation, type Execution } from "./ledger.js";
import {
  childId,
  messageEpoch,
  messageValue,
  nextEpoch,
  spawnId,
  stamped,
  STEP_LIMIT,
  type Instr,
  type Program,
  type SendInstr,
  type SimResult,
  untilTime,
} from "./program.js";

/** The argument of the `add` update. */
export interface AddArg {
  readonly n: number;
  readonly step: boolean;
}

/** The error a failing step throws; it comes back from the journal as a `WorkflowFailedError` named so. */
export const STEP_FAILURE = "StepFailure";

/** The name of an error's class as it reads after a trip through the journal. */
export function errorClass(e: unknown): string {
  if (e instanceof WorkflowFailedError) return e.originalName;
  if (e instanceof Error) return e.name;
  return typeof e;
}

/** How a child ended, from the error its result rejected with. */
export function childStatus(e: unknown): string {
  if (e instanceof CancelledError) return "cancelled";
  if (e instanceof TerminatedError) return "terminated";
  return "failed";
}

/**
 * Runs a generated {@link Program}. Its state (what it observed, the total that updates add up) is
 * what queries return and what the run returns, so the reference model can predict both.
 */
@Workflow("Sim")
export class Sim {
  private total = 0;
  private readonly flags = new Set<string>();
  private readonly obs: string[] = [];
  private updates = 0;
  private epoch = "0";

  constructor(
    private readonly ctx: Ctx,
    private readonly gen: Generation,
  ) {}

  async run(p: Program): Promise<SimResult> {
    this.epoch = p.epoch ?? "0";
    try {
      for (let pc = 0; pc < p.body.length; pc++) await this.exec(p.body[pc] as Instr, pc);
    } catch (e) {
      if (!(e instanceof CancelledError) || !p.catchCancel) throw e;
      await this.ctx.step(
        "cleanup",
        this.body("cleanup", 1, () => "clean"),
        { retry: RetryPolicy.none() },
      );
      this.obs.push("caught");
      if (p.linger === true) {
        // A second cancellation ends the run here, uncaught.
        const v = await this.ctx.waitFor<number | string>("b");
        this.obs.push(`b=${v}`);
      }
      return this.state();
    }
    if (p.next !== undefined) {
      const next: Program = { ...stamped(p.next, nextEpoch(this.epoch)), before: [...this.obs] };
      if (p.nextAttrs === undefined) return this.ctx.continueAsNew(next);
      return this.ctx.continueAsNew(next, { attributes: p.nextAttrs === "none" ? {} : { tag: p.nextAttrs } });
    }
    return this.state();
  }

  @Signal() set(flag: string): void {
    this.flags.add(flag);
  }

  @Query() state(): SimResult {
    return { obs: [...this.obs], total: this.total };
  }

  @Update({
    validate(arg: AddArg) {
      if (arg.n < 0) throw new RejectedError(`add(${arg.n}) refused: the amount is negative`);
    },
  })
  async add(arg: AddArg): Promise<number> {
    const total = (this.total += arg.n);
    const k = this.updates++;
    if (arg.step)
      await this.ctx.step(
        `upd${k}`,
        this.body(`upd${k}`, 1, () => total),
        { retry: RetryPolicy.none() },
      );
    return total;
  }

  private async exec(i: Instr, pc: number): Promise<void> {
    switch (i.k) {
      case "step": {
        const name = `s${pc}`;
        const options: StepOptions = { retry: RetryPolicy.exponential(i.tries, `${i.backoff}ms`, `${i.backoff * 8}ms`) };
        if (i.limit === "timeout") options.timeout = `${STEP_LIMIT}ms`;
        if (i.limit === "heartbeat") options.heartbeatTimeout = `${STEP_LIMIT}ms`;
        const value = await this.ctx.step(name, this.behave(name, i), options);
        this.obs.push(`${name}=${String(value)}`);
        return;
      }
      case "sleep":
        await this.ctx.sleep(`${i.ms}ms`);
        return;
      case "until":
        await this.ctx.sleepUntil(untilTime(this.ctx.now(), i.ms));
        return;
      case "wait": {
        const v = await this.ctx.waitFor<number | string>(i.name, i.timeout === undefined ? {} : { timeout: `${i.timeout}ms` });
        this.obs.push(`${i.name}=${v ?? "timeout"}`);
        return;
      }
      case "cond": {
        const ok = await this.ctx.condition(() => this.flags.has(i.flag), i.timeout === undefined ? {} : { timeout: `${i.timeout}ms` });
        this.obs.push(`${i.flag}=${ok}`);
        return;
      }
      case "child": {
        const id = childId(this.ctx.workflowId, this.epoch, pc);
        const input: Program = { ...stamped(i.prog, "1"), close: i.close };
        const options = i.timeout === undefined ? { close: i.close } : { close: i.close, timeout: i.timeout };
        const handle = i.exec === true ? undefined : await this.ctx.startChild<SimResult>("Sim", id, input, options);
        if (!i.wait) {
          this.obs.push(`c${pc}=started`);
          return;
        }
        try {
          const r = handle === undefined ? await this.ctx.executeChild<SimResult>("Sim", id, input, options) : await handle.result();
          this.obs.push(`c${pc}=ok:${JSON.stringify(r)}`);
        } catch (e) {
          // This run's own cancellation is not the child's outcome.
          if (e instanceof CancelledError && !e.message.includes(` of ${id}`)) throw e;
          // The wait's own timeout, told apart from a child that failed with a TimeoutError of its own.
          const timedOut = e instanceof TimeoutError && e.message.startsWith(`child '${id}' of `);
          this.obs.push(`c${pc}=${timedOut ? "timeout" : childStatus(e)}`);
        }
        return;
      }
      case "spawn": {
        const id = spawnId(this.ctx.workflowId, this.epoch, pc);
        const name = `spawn${pc}`;
        await this.ctx.step(
          name,
          this.body(name, 2, async () => {
            const engine = await this.gen.engine;
            try {
              await engine.start(Sim, id, stamped(i.prog, "1"), { idPolicy: { running: "use-existing", finished: "refuse" } });
            } catch (e) {
              if (!(e instanceof AlreadyExistsError)) throw e;
            }
            return id;
          }),
          { retry: RetryPolicy.exponential(2, "10ms", "80ms") },
        );
        this.obs.push(`${name}=${id}`);
        return;
      }
      case "look": {
        const tag = this.ctx.attributes()["tag"];
        const seen = `${this.ctx.random()} ${this.ctx.uuid()} ${this.ctx.journalSize()}`;
        this.gen.ledger.observe(this.gen, `${this.ctx.workflowId} run ${this.ctx.runId()} at #${pc}`, seen);
        this.obs.push(`look${pc}=${typeof tag === "string" ? tag : "-"}`);
        return;
      }
      case "attrs":
        this.ctx.setAttributes({ tag: i.tag });
        return;
      case "unattrs":
        this.ctx.removeAttributes("tag");
        return;
      case "send": {
        let outcome: string;
        try {
          outcome = String(await this.send(i, pc));
        } catch (e) {
          // This run's own cancellation is not the message's outcome.
          if (e instanceof CancelledError) throw e;
          outcome = errorClass(e);
        }
        this.obs.push(`m${pc}=${outcome}`);
        return;
      }
    }
  }

  /** Sends the message of instruction `pc`; resolves with what it answers (`ok` when nothing). */
  private async send(i: SendInstr, pc: number): Promise<unknown> {
    const self = this.ctx.workflowId;
    switch (i.op) {
      case "signal":
        await this.ctx.signalWorkflow(i.to, "a", messageValue(self, this.epoch, this.ctx.runId(), pc));
        return "ok";
      case "cancel":
        await this.ctx.cancelWorkflow(i.to);
        return "ok";
      case "update":
        return this.ctx.updateWorkflow<number>(i.to, "add", { n: i.n, step: false } satisfies AddArg);
      case "start":
        await this.ctx.startWorkflow("Sim", i.to, stamped(i.prog, messageEpoch(self, this.epoch, pc)), {
          idPolicy: { running: i.running },
        });
        return "ok";
      case "sws":
        await this.ctx.signalWithStart(
          "Sim",
          i.to,
          stamped(i.prog, messageEpoch(self, this.epoch, pc)),
          "a",
          messageValue(self, this.epoch, this.ctx.runId(), pc),
        );
        return "ok";
    }
  }

  /** A step body that does what the instruction says, recording each execution in the ledger. */
  private behave(name: string, i: Extract<Instr, { k: "step" }>): () => Promise<string> {
    return async () => {
      const ledger = this.gen.ledger;
      const key = this.ctx.key();
      const before = ledger.seen(key);
      const e = this.begin(name, i.tries);
      switch (i.b) {
        case "ok":
          ledger.end(this.gen, e, "ok");
          return `v${name}`;
        case "flaky":
          if (before < i.fails) return this.fail(name, e);
          ledger.end(this.gen, e, "ok");
          return `v${name}`;
        case "fail":
          return this.fail(name, e);
        case "hang": {
          const signal = this.ctx.abortSignal;
          if (e !== undefined) e.hangs = true;
          return new Promise<string>((_, reject) => {
            const aborted = (): void => {
              if (e !== undefined && this.gen.alive) e.aborted = true;
              ledger.end(this.gen, e, "failed");
              reject(
                signal.reason instanceof Error ? signal.reason : new CancelledError(`step ${name} of ${this.ctx.workflowId} was aborted`),
              );
            };
            if (signal.aborted) aborted();
            else signal.addEventListener("abort", aborted, { once: true });
          });
        }
      }
    };
  }

  /** A step body that always does `fn`, recording its execution. */
  private body<T>(name: string, tries: number, fn: () => T | Promise<T>): () => Promise<T> {
    return async () => {
      const e = this.begin(name, tries);
      try {
        const v = await fn();
        this.gen.ledger.end(this.gen, e, "ok");
        return v;
      } catch (error) {
        this.gen.ledger.end(this.gen, e, "failed");
        throw error;
      }
    };
  }

  private begin(name: string, tries: number): Execution | undefined {
    return this.gen.ledger.begin(this.gen, {
      workflowId: this.ctx.workflowId,
      runId: this.ctx.runId(),
      name,
      key: this.ctx.key(),
      attempt: this.ctx.attempt(),
      tries,
    });
  }

  private fail(name: string, e: Execution | undefined): never {
    this.gen.ledger.end(this.gen, e, "failed");
    const error = new Error(`step ${name} of ${this.ctx.workflowId} failed`);
    error.name = STEP_FAILURE;
    throw error;
  }
}

/** The same workflow under another type, which the engine learns only after it opened (`engine.register`). */
@Workflow("SimLate")
export class SimLate extends Sim {}
