/*
 * The engine processes of one simulated cluster, by slot: each slot holds one process at a time,
 * and a killed one is replaced by a new process under a new owner name. Picks the process a call
 * goes through: the run's owner, another process (the call is forwarded) or a given slot.
 */
import { CallFailed, EngineHandle } from "./engine-handle.js";
import type { ClusterSchedule, Via } from "./cluster-schedule.js";
import { SIM_PG_URL } from "./cluster-db.js";

const FORWARD_TIMEOUT_MS = 4_000;
/** How long the harness waits for a process to say whether it holds a run's shard. */
const HOLDS_TIMEOUT_MS = 1_500;
const RESULT_GAP_MS = 150;

export class ClusterProcesses {
  private readonly slots: EngineHandle[] = [];
  /** Every process started, so none outlives the schedule. */
  private readonly all: EngineHandle[] = [];
  private readonly generations: number[];
  /** Processes the harness ended on purpose; any other exit is a crash of the engine. */
  private readonly ended = new Set<EngineHandle>();
  /** Processes that exited without being told to, with their last stderr. */
  readonly crashed: string[] = [];

  constructor(
    private readonly schedule: ClusterSchedule,
    private readonly schema: string,
    private readonly tag: string,
    private readonly trace: (line: string) => void,
  ) {
    this.generations = new Array<number>(schedule.engines).fill(0);
  }

  /** Starts a process in every slot and waits until each is open. */
  async startAll(): Promise<void> {
    await Promise.all(Array.from({ length: this.schedule.engines }, (_, slot) => this.spawn(slot)));
  }

  /** Starts a new process in `slot` (the old one must be gone) and waits until it is open. */
  async spawn(slot: number): Promise<void> {
    // A slot holds one process: a restart due after a second kill of the same process starts none.
    if (this.slots[slot]?.alive === true) return;
    const owner = `${this.tag}s${slot}g${this.generations[slot]!++}`;
    const handle = new EngineHandle({
      url: SIM_PG_URL,
      schema: this.schema,
      owner,
      leaseMs: this.schedule.leaseMs,
      skewMs: this.schedule.skews[slot] ?? 0,
      forwardTimeoutMs: FORWARD_TIMEOUT_MS,
      shards: this.schedule.shards,
    });
    this.slots[slot] = handle;
    this.all.push(handle);
    // `exited` settles when the process ends and never rejects.
    handle.exited.then(
      () => {
        if (!this.ended.has(handle)) this.crashed.push(`engine process ${owner} exited by itself (${handle.ending}): ${handle.errors}`);
      },
      () => undefined,
    );
    try {
      await handle.ready;
    } catch (e) {
      // Killed by the schedule while it opened; one that died by itself is among `crashed`.
      if (this.ended.has(handle)) return this.trace(`process ${owner} killed while it opened`);
      throw e;
    }
    this.trace(`process ${owner} open in slot ${slot}`);
  }

  at(slot: number): EngineHandle | undefined {
    return this.slots[slot];
  }

  owners(): string[] {
    return this.slots.filter((h) => h.alive).map((h) => h.owner);
  }

  /** The latest process of each slot, gone or not. */
  handles(): readonly EngineHandle[] {
    return this.slots;
  }

  /** Each slot's process and whether it runs, is stopped or is gone. */
  states(): string[] {
    return this.slots.map((h) => `${h.owner} ${!h.alive ? "gone" : h.paused ? "stopped" : "running"}`);
  }

  /** SIGKILLs the process of `slot`; false when it was gone already. */
  async kill(slot: number): Promise<boolean> {
    const h = this.slots[slot];
    if (h === undefined || !h.alive) return false;
    this.ended.add(h);
    await h.kill();
    this.trace(`process ${h.owner} killed`);
    return true;
  }

  /** Gives every slot a live, running process again. */
  async reviveAll(): Promise<void> {
    await Promise.all(
      this.slots.map(async (h, slot) => {
        if (h.alive) h.resume();
        else await this.spawn(slot);
      }),
    );
  }

  async killAll(): Promise<void> {
    for (const h of this.all) this.ended.add(h);
    await Promise.all(this.all.map((h) => h.kill()));
  }

  /** The slot of the process that holds `id`'s shard now, as the processes themselves say. */
  async ownerOf(id: string): Promise<number | undefined> {
    const answers = await Promise.all(
      this.slots.map((h) =>
        h.alive && !h.paused
          ? Promise.race([h.send<boolean>({ op: "holds", id }).catch(() => false), sleep(HOLDS_TIMEOUT_MS).then(() => false)])
          : false,
      ),
    );
    const slot = answers.indexOf(true);
    return slot < 0 ? undefined : slot;
  }

  /** The process a call goes through. A call routed by ownership goes elsewhere when no process says it holds the run. */
  async route(via: Via, id: string, attempt = 0): Promise<EngineHandle> {
    const fallback = (): EngineHandle => this.liveFrom(via.slot + attempt);
    if (via.route === "slot" && attempt === 0) return fallback();
    const owner = await this.ownerOf(id);
    if (owner === undefined) return fallback();
    if (via.route === "owner") return this.slots[owner]!;
    const others = this.slots.filter((h, slot) => slot !== owner && h.alive && !h.paused);
    return others.length === 0 ? fallback() : others[(via.slot + attempt) % others.length]!;
  }

  /** A run's result, asked of live processes in turn (`askMs` each) until one answers or `withinMs` passes. */
  async result<T>(id: string, withinMs: number, askMs: number): Promise<T | undefined> {
    const deadline = Date.now() + withinMs;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const answer = await Promise.race([
        this.liveFrom(attempt)
          .send<T>({ op: "result", id })
          .catch(() => undefined),
        sleep(askMs).then(() => undefined),
      ]);
      if (answer !== undefined) return answer;
      await sleep(RESULT_GAP_MS);
    }
    return undefined;
  }

  /** The first live process from `slot` on (a paused one if none runs), or the slot's own (dead) one. */
  liveFrom(slot: number): EngineHandle {
    const n = this.slots.length;
    for (const running of [true, false]) {
      for (let i = 0; i < n; i++) {
        const h = this.slots[(slot + i) % n]!;
        if (h.alive && (!running || !h.paused)) return h;
      }
    }
    return this.slots[slot % n]!;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

export { CallFailed };
