import { NotFoundError, ShardMovedError, ShutDownError } from "../core/errors.js";
import type { ScheduleOp } from "./schedule-handle.js";
import { ScheduleRuntime, type ScheduleDeps, type ScheduleDescription } from "./schedule-runtime.js";
import type { ScheduleSettings } from "./schedule-spec.js";
import { ScheduleGenerations } from "../journal/schedule-generations.js";
import { initialState } from "../journal/schedule-state.js";
import type { SystemRecord } from "../journal/system-records.js";
import type { StreamName } from "../journal/stream-names.js";

/** The engine's schedules, by name. */
export class Schedules {
  private readonly schedules = new Map<string, ScheduleRuntime>();
  private readonly recovered = new Map<string, ScheduleGenerations>();
  /** Creations and updates in progress, so two calls for one name keep one schedule. */
  private readonly pending = new Map<string, Promise<void>>();
  private closed = false;

  constructor(private readonly deps: ScheduleDeps) {}

  /** Creates the schedule, or updates the spec of the schedule of that name. */
  async schedule(name: string, settings: ScheduleSettings, paused: boolean): Promise<void> {
    for (let p = this.pending.get(name); p !== undefined; p = this.pending.get(name)) await p.catch(() => undefined);
    const work = this.upsert(name, settings, paused);
    this.pending.set(name, work);
    try {
      await work;
    } finally {
      if (this.pending.get(name) === work) this.pending.delete(name);
    }
  }

  /** The schedule of that name; `NotFoundError` when there is none (never created, or deleted). */
  get(name: string): ScheduleRuntime {
    const s = this.schedules.get(name);
    if (s === undefined) throw new NotFoundError(`no schedule is named '${name}'`);
    return s;
  }

  /** The schedules this process holds, by name; only those of `shard` when given. */
  list(shardOf: (name: string) => number, shard?: number): ScheduleDescription[] {
    const out: ScheduleDescription[] = [];
    for (const [name, s] of this.schedules) if (shard === undefined || shardOf(name) === shard) out.push(s.describe());
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Performs a schedule handle's operation on the schedule of that name. */
  perform(name: string, op: ScheduleOp, args: readonly number[], request?: string): Promise<unknown> {
    switch (op) {
      case "describe":
        return Promise.resolve(this.get(name).describe());
      case "pause":
        return this.get(name).pause();
      case "resume":
        return this.get(name).resume();
      case "trigger":
        return this.get(name).trigger(request);
      case "backfill":
        return this.get(name).backfill(args[0] as number, args[1] as number);
      case "delete":
        return this.delete(name);
    }
  }

  async delete(name: string): Promise<void> {
    const s = this.get(name);
    this.schedules.delete(name);
    await s.delete();
  }

  /** Collects a record read on open; schedules are rebuilt from them by `open`. */
  recover(name: StreamName, record: SystemRecord): void {
    let r = this.recovered.get(name.name);
    if (r === undefined) this.recovered.set(name.name, (r = new ScheduleGenerations()));
    r.add(name.n, record);
  }

  /** Rebuilds the schedules recovered since the last call and starts their work. */
  open(): void {
    const rebuilt: ScheduleRuntime[] = [];
    for (const [name, r] of this.recovered) {
      if (r.state === undefined) continue;
      const s = new ScheduleRuntime(name, r.state, r.generation, this.deps);
      for (const record of r.records) s.apply(record);
      this.schedules.set(name, s);
      rebuilt.push(s);
      this.deps.sys.drop("schedule", name, r.stale).catch((e: unknown) => this.deps.failed(e));
    }
    this.recovered.clear();
    for (const s of rebuilt) s.open();
  }

  /** Stops and forgets the schedules of a shard this process of a cluster no longer holds. */
  forget(shard: number): void {
    for (const [name, s] of [...this.schedules]) {
      if (this.deps.sys.shardOf("schedule", name) !== shard) continue;
      s.close(new ShardMovedError(`schedule '${name}' moved with shard ${shard} to another process; ask again there`));
      this.schedules.delete(name);
    }
    for (const name of [...this.recovered.keys()]) if (this.deps.sys.shardOf("schedule", name) === shard) this.recovered.delete(name);
  }

  close(): void {
    this.closed = true;
    for (const s of this.schedules.values()) s.close();
  }

  private async upsert(name: string, settings: ScheduleSettings, paused: boolean): Promise<void> {
    if (this.closed) throw new ShutDownError(`schedule '${name}' cannot be set: the engine is shut down`);
    const known = this.schedules.get(name);
    if (known !== undefined) return known.update(settings);
    const state = initialState(settings, paused, this.deps.clock.now());
    const s = new ScheduleRuntime(name, state, 0, this.deps);
    await this.deps.sys.append("schedule", name, 0, state);
    this.schedules.set(name, s);
    s.open();
  }
}
