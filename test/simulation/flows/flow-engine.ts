import "reflect-metadata";
import { container as rootContainer } from "tsyringe";
import { aesGcm, Config, Engine, StorageError, type PayloadCipher } from "@fusee/runtime";
import { VirtualClock } from "@fusee/runtime/testing";
import { Random, SimDisk } from "../sim-disk.js";
import type { FlowPlan } from "./flow-plan.js";
import { FlowViolation } from "./flow-properties.js";
import { FAwait, FLOW_WORKFLOWS, FlowGeneration, FlowWorld, LIMIT, PATCH_VERSIONS } from "./flow-workflows.js";

const DIR = "/data";
const QUIET_ROUNDS = 3;
const MAX_ROUNDS = 2000;
/** A call's value in the trace: a handle by its run's ID. */
const valueText = (v: unknown): string =>
  v !== null && typeof v === "object" && typeof (v as { id?: unknown }).id === "string"
    ? `run ${(v as { id: string }).id}`
    : JSON.stringify(v ?? null);
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The keys of the engine of generation `n`: a new one encrypts, every earlier one still decrypts. */
function rotatedKeys(n: number): Record<string, Uint8Array> {
  const keys: Record<string, Uint8Array> = {};
  for (let k = n; k >= 1; k--) keys[`k${k}`] = new Uint8Array(32).fill(k);
  return keys;
}

/**
 * One engine's time: from its open to its stop (`undefined` while it runs), and whether it stopped at
 * a quiet point (a shutdown, a power loss with nothing unsynced) or in the middle of work.
 */
export interface EngineLife {
  readonly n: number;
  readonly openedAt: number;
  stoppedAt: number | undefined;
  clean: boolean;
}

/** How a client call ended: settled on a live engine, or in doubt (its engine died first). */
export type Outcome =
  | { readonly doubt: true }
  | { readonly doubt: false; readonly ok: true; readonly value: unknown }
  | { readonly doubt: false; readonly ok: false; readonly error: unknown };

/**
 * The engines of one plan on one simulated disk, one at a time: opens them, runs calls to a quiet
 * point, places the faults (power loss at a count of file operations, failed sync, downtime) and
 * reopens on the image a power loss leaves.
 */
export class FlowEngines {
  readonly world = new FlowWorld();
  disk = SimDisk.empty(DIR);
  clock: VirtualClock;
  /** The data directory on the simulated disk. */
  readonly dir = DIR;
  engine: Engine | undefined;
  /** When the engine open now was opened. */
  openedAt: number;
  gen: FlowGeneration | undefined;
  now: number;
  /** Faults that struck so far (power losses, failed syncs, restarts). */
  faults = 0;
  /** Every engine opened so far, in order. */
  readonly lives: EngineLife[] = [];
  private readonly rng: Random;
  private generations = 0;
  private crashImage: SimDisk | undefined;
  crashArmed = false;
  /** The limit's concurrency now: the plan's, until a `relimit` changes it. */
  private concurrent: number;
  /** The cipher of the engine open now, under a rotating codec. */
  private cipher: PayloadCipher | undefined;

  constructor(
    private readonly plan: FlowPlan,
    start: number,
    private readonly trace: string[],
  ) {
    this.rng = new Random(plan.diskSeed);
    this.now = start;
    this.openedAt = start;
    this.clock = new VirtualClock(start, { runningStepGrace: 0 });
    this.concurrent = plan.limit.concurrent;
    this.world.concurrent = plan.limit.concurrent;
    this.world.limited = plan.limit.concurrent > 0 || plan.limit.perSecond > 0;
  }

  /**
   * Changes the limit's concurrency on the running engine, as an operator would; engines opened
   * later are given the new spec, since a limit is configuration, not journaled state.
   */
  relimit(concurrent: number): void {
    this.concurrent = concurrent;
    this.world.concurrent = concurrent;
    this.world.limited = concurrent > 0 || this.plan.limit.perSecond > 0;
    if (this.alive) this.engine?.limit(LIMIT, { concurrent, perSecond: this.plan.limit.perSecond });
  }

  get alive(): boolean {
    return this.gen?.alive === true && this.crashImage === undefined && !this.disk.syncFailed;
  }

  /** A fault struck since the last reopen and the engine must be opened again. */
  get struck(): boolean {
    return this.crashImage !== undefined || this.disk.syncFailed;
  }

  async open(): Promise<void> {
    const gen = new FlowGeneration(++this.generations, this.world, new VirtualClock(this.now, { runningStepGrace: 0 }));
    this.clock = gen.clock;
    const container = rootContainer.createChildContainer();
    container.registerInstance(FlowGeneration, gen);
    this.gen = gen;
    this.engine = undefined;
    let config = Config.local(DIR).shards(this.plan.shards).clock(this.clock);
    this.cipher = this.plan.codec === "rotating" ? aesGcm(rotatedKeys(gen.n)) : undefined;
    if (this.cipher !== undefined) config = config.codec(this.cipher);
    if (this.plan.retention !== undefined) config = config.retention(this.plan.retention.ms).keepHistory(this.plan.retention.keepHistory);
    if (this.plan.idem !== undefined) config = config.idempotencyWindow(this.plan.idem.windowMs);
    this.openedAt = this.now;
    this.lives.push({ n: gen.n, openedAt: this.now, stoppedAt: undefined, clean: false });
    try {
      this.engine = await Engine.open(config, {
        workflows: [...FLOW_WORKFLOWS, PATCH_VERSIONS[this.version(gen.n) - 1] as (typeof PATCH_VERSIONS)[number]],
        container,
        fileLayer: this.disk.layer,
        limits: { [LIMIT]: { concurrent: this.concurrent, perSecond: this.plan.limit.perSecond } },
      });
    } catch (e) {
      gen.alive = false;
      throw new FlowViolation("recovery", `the engine refused to open: ${String(e)}`);
    }
    this.trace.push(`  engine ${gen.n} open at ${this.now}`);
    await this.clock.advance(0);
    await this.drain();
  }

  /** The version of the versioned workflow the engine of generation `n` runs: 1, 2 (the patch) or 3 (the patch deprecated). */
  version(n: number): 1 | 2 | 3 {
    const { upgradeAt, deprecateAt = 0 } = this.plan;
    if (deprecateAt > 0 && n >= deprecateAt) return 3;
    return upgradeAt > 0 && n >= upgradeAt ? 2 : 1;
  }

  /** The engine open now stopped, at a quiet point or not. */
  private stopped(clean: boolean): void {
    const life = this.lives[this.lives.length - 1];
    if (life === undefined || life.stoppedAt !== undefined) return;
    life.stoppedAt = this.now;
    life.clean = clean;
  }

  /** Runs a client call to a quiet point; in doubt when the engine died before it settled. */
  async call(what: string, fn: (engine: Engine) => Promise<unknown>): Promise<Outcome> {
    const gen = this.gen as FlowGeneration;
    let settled = false;
    let aliveAtSettle = false;
    let result = { doubt: true } as Outcome;
    let promise: Promise<unknown>;
    try {
      promise = fn(this.engine as Engine);
    } catch (e) {
      promise = Promise.reject(e);
    }
    promise.then(
      (value) => {
        settled = true;
        aliveAtSettle = gen.alive;
        result = { doubt: false, ok: true, value };
      },
      (error: unknown) => {
        settled = true;
        aliveAtSettle = gen.alive;
        result = { doubt: false, ok: false, error };
      },
    );
    await this.drain();
    if (!settled || !aliveAtSettle || (!result.doubt && !result.ok && result.error instanceof StorageError && this.disk.syncFailed)) {
      if (!gen.alive || this.struck) {
        this.trace.push(
          `  ${what}: in doubt (${settled ? `settled with ${result.doubt ? "" : result.ok ? "ok" : String(result.error)}` : "unsettled"})`,
        );
        return { doubt: true };
      }
      throw new FlowViolation("recovery", `${what} never settled on a live engine`);
    }
    const r = result as unknown as Exclude<Outcome, { doubt: true }>;
    this.trace.push(`  ${what}: ${r.ok ? `ok ${valueText(r.value)}` : `${(r.error as Error)?.name}: ${(r.error as Error)?.message}`}`);
    return r;
  }

  /** Arms a power loss after `afterOps` more file operations (at once when 0). */
  armCrash(afterOps: number): void {
    if (afterOps === 0) return this.powerLoss();
    this.crashArmed = true;
    this.disk.onOp(this.disk.ops + afterOps, () => this.powerLoss());
  }

  powerLoss(): void {
    if (this.crashImage !== undefined || this.gen === undefined || !this.gen.alive) return;
    this.crashArmed = false;
    this.crashImage = this.disk.crashImage(this.rng);
    this.gen.alive = false;
  }

  /** After a power loss or a failed sync: checks the old engine's refusal, reopens on what the disk holds. */
  async reopen(): Promise<void> {
    if (this.disk.syncFailed && this.crashImage === undefined) {
      const probe = await (this.engine as Engine).start(FAwait, "probe", undefined).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (!(probe instanceof StorageError))
        throw new FlowViolation(
          "recovery",
          `after a failed sync the engine ${probe === undefined ? "accepted a start" : `refused a start with ${String(probe)}`}`,
        );
      this.crashImage = this.disk.crashImage(this.rng);
      (this.gen as FlowGeneration).alive = false;
      this.trace.push(`  sync failed`);
    }
    if (this.crashImage === undefined) return;
    this.checkSeals();
    this.stopped(false);
    this.trace.push(`  power loss at file operation ${this.disk.ops}`);
    this.faults++;
    this.disk.disarm();
    this.disk = this.crashImage;
    this.crashImage = undefined;
    this.crashArmed = false;
    await this.open();
  }

  /** A clean shutdown, `downMs` with no engine, and a new engine. */
  async restart(downMs: number): Promise<void> {
    const engine = this.engine as Engine;
    const gen = this.gen as FlowGeneration;
    gen.alive = false;
    this.faults++;
    await engine.shutdown().catch(() => undefined);
    this.checkSeals();
    this.stopped(true);
    this.now += downMs;
    await this.open();
  }

  /** A power loss at a quiet point (nothing unsynced), `downMs` with no engine, and a new engine on the image. */
  async down(downMs: number): Promise<void> {
    this.powerLoss();
    this.stopped(true);
    this.now += downMs;
    await this.reopen();
  }

  async tick(ms: number): Promise<void> {
    this.now += ms;
    await this.clock.advance(ms);
    await this.drain();
  }

  async close(): Promise<void> {
    this.disk.disarm();
    const gen = this.gen;
    if (gen === undefined || !gen.alive || this.engine === undefined) return;
    gen.alive = false;
    await this.engine.shutdown().catch(() => undefined);
    this.checkSeals();
  }

  /**
   * Under a rotating codec, the engine that just stopped sealed every payload with the key its open
   * put first: the older keys it was given only open what earlier engines wrote. (That every payload
   * still opens, the reads of every later check show.)
   */
  private checkSeals(): void {
    const cipher = this.cipher;
    if (cipher === undefined) return;
    for (const id of cipher.keyIds.slice(1)) {
      const n = cipher.sealedCount(id);
      if (n > 0)
        throw new FlowViolation(
          "codec",
          `engine ${this.gen?.n ?? 0} sealed ${n} payload(s) with the older key ${id}; its newest key is ${cipher.keyIds[0] ?? ""}`,
        );
    }
  }

  /** Lets the engine run until nothing moves: no file operation, no body, no timer set. */
  async drain(): Promise<void> {
    let quiet = 0;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const before = this.fingerprint();
      if (this.engine !== undefined && this.alive) await this.engine.idle({ runningSteps: "ignore" });
      for (let i = 0; i < 4; i++) await turn();
      if (before === this.fingerprint()) {
        if (++quiet >= QUIET_ROUNDS) return;
        continue;
      }
      quiet = 0;
    }
    throw new FlowViolation("recovery", `the engine never became quiet (${MAX_ROUNDS} rounds)`);
  }

  private fingerprint(): string {
    return `${this.disk.ops}/${this.world.bodies.length}/${this.clock.pendingTimers}`;
  }
}
