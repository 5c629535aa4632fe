import type { Clock, ClockTimer } from "../core/clock.js";
import { RejectedError } from "../core/errors.js";
import type { SystemRecord } from "../journal/system-records.js";
import { retryDelay, startOnce, type FlowRuns } from "./flow-runs.js";
import type { StreamName } from "../journal/stream-names.js";
import type { SystemLog } from "./system-streams.js";

/** An event as its record holds it. */
export interface WindowEvent<Rule> {
  readonly type: string;
  readonly eventId: string | undefined;
  readonly at: number;
  readonly rule: Rule;
  readonly value: unknown;
}

/** A window (a debounce window or a batch) of one key, collecting events until it fires one run. */
export interface Window<Rule> {
  readonly key: string;
  readonly n: number;
  readonly runId: string;
  readonly type: string;
  /** Fixed by the window's first event. */
  readonly rule: Rule;
  readonly firstAt: number;
  lastAt: number;
  /** Event values in arrival order (only the latest where the policy keeps one). */
  values: unknown[];
  readonly eventIds: Set<string>;
  /** No more events join: the window is firing or has fired. */
  closed: boolean;
  /** The run was started (or found started) and that is durable. */
  fired: boolean;
  /** When it fired (its fired record's time); 0 before. */
  firedAt: number;
  timer: ClockTimer | undefined;
  /** The latest append of an event: a window fires only after all its events are durable. */
  lastAppend: Promise<void>;
  failures: number;
}

/** What makes windows debounce windows or batches. */
export interface WindowPolicy<Rule> {
  readonly family: "debounce" | "batch";
  readonly firedKind: "debounce-fired" | "batch-fired";
  /** Keeps only the latest event's value (debounce) rather than all of them (batch). */
  readonly keepLatest: boolean;
  runId(key: string, n: number): string;
  eventRecord(event: WindowEvent<Rule>): SystemRecord;
  readEvent(record: SystemRecord): WindowEvent<Rule> | undefined;
  /** When the window closes by time. */
  deadline(w: Window<Rule>): number;
  /** The window closes at once (a full batch). */
  full(w: Window<Rule>): boolean;
  input(w: Window<Rule>): unknown;
}

interface KeyState<Rule> {
  /** The largest window number used: numbers grow even across restarts, so run IDs never repeat. */
  lastN: number;
  /** Ascending by number: the latest fired window (kept to answer retried event IDs), then unfired ones. */
  windows: Window<Rule>[];
}

/**
 * Keyed windows of events, each becoming one run, kept durably in engine streams (one stream per
 * window: `$debounce/<key>/<n>` or `$batch/<key>/<n>`).
 *
 * An event is acknowledged once its record is durable. A window fires by starting its run under an
 * ID derived from its number, then recording that it fired; after a crash in between, the start is
 * retried and finds the run already there. A window fires only while this process's lease on its
 * shard lasts. A key keeps its latest fired window, so a retried event ID of it still answers with
 * its run; older fired windows are dropped.
 */
export class EventWindows<Rule> {
  private readonly keys = new Map<string, KeyState<Rule>>();
  /** Keys read by recovery since the last `open`. */
  private readonly recovered = new Set<string>();
  private closed = false;

  constructor(
    private readonly policy: WindowPolicy<Rule>,
    private readonly sys: SystemLog,
    private readonly runs: FlowRuns,
    private readonly clock: Clock,
    private readonly failed: (e: unknown) => void,
  ) {}

  /** Adds an event to the key's open window (opening one when there is none); resolves once durable, with the window's run ID. */
  async add(type: string, key: string, value: unknown, rule: Rule, eventId: string | undefined): Promise<string> {
    const state = this.keys.get(key) ?? { lastN: 0, windows: [] };
    if (eventId !== undefined) {
      const known = state.windows.find((w) => w.eventIds.has(eventId));
      if (known !== undefined) {
        await known.lastAppend;
        return known.runId;
      }
    }
    const now = this.clock.now();
    let w = state.windows[state.windows.length - 1];
    if (w !== undefined && !w.closed && w.type !== type) {
      throw new RejectedError(
        `${this.policy.family} key '${key}' has an open window of workflow type '${w.type}'; a ${type} event cannot join it`,
        { reason: "window-conflict" },
      );
    }
    const opening = w === undefined || w.closed;
    const n = opening ? Math.max(now, state.lastN + 1) : (w as Window<Rule>).n;
    const windowRule = opening ? rule : (w as Window<Rule>).rule;
    // Encoding may throw (a value too large): nothing in memory changes before it succeeded.
    const appended = this.sys.append(
      this.policy.family,
      key,
      n,
      this.policy.eventRecord({ type, eventId, at: now, rule: windowRule, value }),
    );
    appended.catch((e: unknown) => this.failed(e));
    if (opening) {
      w = this.newWindow(key, n, type, windowRule, now);
      state.lastN = n;
      state.windows.push(w);
      this.keys.set(key, state);
    }
    const win = w as Window<Rule>;
    this.take(win, { type, eventId, at: now, rule: windowRule, value });
    win.lastAppend = appended;
    if (this.policy.full(win)) this.fireSoon(win);
    else this.arm(win);
    await appended;
    return win.runId;
  }

  /** Rebuilds a window from a record read on open. */
  recover(name: StreamName, record: SystemRecord): void {
    const state = this.keys.get(name.name) ?? { lastN: 0, windows: [] };
    this.keys.set(name.name, state);
    this.recovered.add(name.name);
    state.lastN = Math.max(state.lastN, name.n);
    let w = state.windows.find((x) => x.n === name.n);
    if (record.kind === this.policy.firedKind) {
      if (w !== undefined) {
        w.fired = true;
        w.closed = true;
        w.firedAt = record.at;
      }
      return;
    }
    const event = this.policy.readEvent(record);
    if (event === undefined) return;
    if (w === undefined) {
      w = this.newWindow(name.name, name.n, event.type, event.rule, event.at);
      state.windows.push(w);
    }
    this.take(w, event);
  }

  /** After recovery: forgets superseded fired windows, fires what is due and arms the rest. */
  open(): void {
    const keys = [...this.recovered];
    this.recovered.clear();
    for (const key of keys) {
      const state = this.keys.get(key);
      if (state === undefined) continue;
      state.windows.sort((a, b) => a.n - b.n);
      const lastFired = state.windows.filter((w) => w.fired).pop();
      const stale = state.windows.filter((w) => w.fired && w !== lastFired);
      state.windows = state.windows.filter((w) => !stale.includes(w));
      this.sys
        .drop(
          this.policy.family,
          key,
          stale.map((w) => w.n),
        )
        .catch((e: unknown) => this.failed(e));
      const unfired = state.windows.filter((w) => !w.fired);
      unfired.forEach((w, i) => {
        if (i < unfired.length - 1 || this.policy.full(w)) this.fireSoon(w);
        else this.arm(w);
      });
    }
  }

  /** Forgets the windows of a shard this process of a cluster no longer holds; its next owner fires them. */
  forget(shard: number): void {
    for (const [key, state] of [...this.keys]) {
      if (this.sys.shardOf(this.policy.family, key) !== shard) continue;
      for (const w of state.windows) w.timer?.cancel();
      this.keys.delete(key);
      this.recovered.delete(key);
    }
  }

  /**
   * Forgets the keys whose every window fired at or before `cutoff`: their streams are dropped (the
   * runs they started stay), so a key used once does not stay in memory and in the log for good.
   * A retried event ID of a forgotten window opens a new window.
   */
  async sweep(cutoff: number): Promise<void> {
    for (const [key, state] of [...this.keys]) {
      if (state.windows.length === 0 || !state.windows.every((w) => w.fired && w.firedAt <= cutoff)) continue;
      this.keys.delete(key);
      await this.sys.drop(
        this.policy.family,
        key,
        state.windows.map((w) => w.n),
      );
    }
  }

  /** Keys with windows in memory, for diagnostics and tests. */
  keyCount(): number {
    return this.keys.size;
  }

  /** Windows waiting to fire (open or firing), for diagnostics. */
  pending(): number {
    let n = 0;
    for (const state of this.keys.values()) n += state.windows.filter((w) => !w.fired).length;
    return n;
  }

  close(): void {
    this.closed = true;
    for (const state of this.keys.values()) for (const w of state.windows) w.timer?.cancel();
  }

  private newWindow(key: string, n: number, type: string, rule: Rule, at: number): Window<Rule> {
    return {
      key,
      n,
      type,
      rule,
      runId: this.policy.runId(key, n),
      firstAt: at,
      lastAt: at,
      values: [],
      eventIds: new Set(),
      closed: false,
      fired: false,
      firedAt: 0,
      timer: undefined,
      lastAppend: Promise.resolve(),
      failures: 0,
    };
  }

  private take(w: Window<Rule>, event: WindowEvent<Rule>): void {
    if (this.policy.keepLatest) w.values = [event.value];
    else w.values.push(event.value);
    if (event.eventId !== undefined) w.eventIds.add(event.eventId);
    w.lastAt = Math.max(w.lastAt, event.at);
  }

  private arm(w: Window<Rule>): void {
    w.timer?.cancel();
    if (this.closed) return;
    w.timer = this.clock.schedule(Math.max(0, this.policy.deadline(w) - this.clock.now()), () => this.fireSoon(w));
  }

  /** Fires `w` without waiting; what escapes `fire`'s own handling stops the windows as a storage failure does. */
  private fireSoon(w: Window<Rule>): void {
    this.fire(w).catch((e: unknown) => this.failed(e));
  }

  private async fire(w: Window<Rule>): Promise<void> {
    if (w.fired || this.closed) return;
    w.closed = true;
    w.timer?.cancel();
    w.timer = undefined;
    try {
      await w.lastAppend;
    } catch (e) {
      // The window's own record failed: the engine's storage did.
      if (!this.closed) this.failed(e);
      return;
    }
    if (this.closed) return;
    // A process stopped past its lease wakes with this window overdue, before it hears that it lost
    // the shard: the shard's next holder may have taken later events into the window, and fires it
    // with them. Tried again as a failed start is; the loss of the shard cancels that.
    if (!this.sys.holds(this.policy.family, w.key)) return this.retry(w);
    try {
      await startOnce(this.runs, w.type, w.runId, this.policy.input(w), this.sys.shardOf(this.policy.family, w.key));
    } catch {
      if (this.closed) return;
      // The start could not be made: the workflow type is not registered yet, or the run's shard
      // (another process's, perhaps) could not take it now. Tried again later; a failure of this
      // engine's own storage stopped it already, and its starts fail until it closes.
      return this.retry(w);
    }
    const state = this.keys.get(w.key);
    // A window of a shard this process lost meanwhile is its next owner's to record.
    if (this.closed || state === undefined || !state.windows.includes(w)) return;
    w.fired = true;
    w.firedAt = this.clock.now();
    const stale = state.windows.filter((x) => x.fired && x.n < w.n);
    state.windows = state.windows.filter((x) => !stale.includes(x));
    try {
      await this.sys.append(this.policy.family, w.key, w.n, { kind: this.policy.firedKind, at: this.clock.now() });
      await this.sys.drop(
        this.policy.family,
        w.key,
        stale.map((x) => x.n),
      );
    } catch (e) {
      if (!this.closed) this.failed(e);
    }
  }

  /** Fires `w` again later, a little later with each failure. */
  private retry(w: Window<Rule>): void {
    w.failures++;
    w.timer = this.clock.schedule(retryDelay(w.failures), () => this.fireSoon(w));
  }
}
