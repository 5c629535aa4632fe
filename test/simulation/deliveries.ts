import type { JournalRecord, RunDetail } from "@fusee/runtime";
import type { Program } from "./program.js";
import type { Property } from "./properties.js";

/** An acknowledged signal or update, waiting for the next check to find it where it must be. */
interface Acked {
  readonly id: string;
  readonly kind: "signal" | "update";
  readonly key: string;
  /** The run of the ID the checks saw last before the call: the run the call went to, or one that replaced it since. */
  readonly runId: number;
  readonly what: string;
}

/** What one run's journal delivered: each signal value and update ID with how often it is there. */
interface Delivered {
  readonly signals: Map<string, number>;
  readonly updates: Map<string, number>;
  /** Mailbox values the run this one continues had taken (the `before` of its input). */
  readonly before: Set<string>;
}

/**
 * Exactly once, at the journal: every acknowledged signal and update is in the journal of the run
 * it went to (or of the run that took its place in the same action: continued as new, with the
 * value handed on or already taken, or reset, with the value copied), and no journal holds a
 * signal or an update ID twice, whether delivered, handed on or carried in its start.
 */
export class Deliveries {
  private pending: Acked[] = [];
  /** What each ID's run held at the last check. */
  private readonly seen = new Map<string, { runId: number; got: Delivered }>();

  constructor(private readonly violate: (property: Property, detail: string) => void) {}

  /** A call was acknowledged; `runId` is the ID's run at the check before it (0: none). */
  acked(id: string, kind: Acked["kind"], key: string | number, runId: number | undefined, what: string): void {
    this.pending.push({ id, kind, key: String(key), runId: runId ?? 0, what });
  }

  check(details: ReadonlyMap<string, RunDetail>): void {
    const delivered = new Map<string, Delivered>();
    for (const [id, d] of details) {
      const got = deliveredBy(d.journal);
      delivered.set(id, got);
      for (const [key, n] of got.signals)
        if (n > 1 && unique(key)) this.violate("exactlyOnce", `run ${d.runId} of ${id} holds the signal ${key} ${n} times`);
      for (const [key, n] of got.updates)
        if (n > 1) this.violate("exactlyOnce", `run ${d.runId} of ${id} holds the update ${key} ${n} times`);
    }
    this.handedOn(details, delivered);
    const pending = this.pending;
    this.pending = [];
    for (const a of pending) {
      const d = details.get(a.id);
      const got = delivered.get(a.id);
      if (d === undefined || got === undefined) continue;
      const first = d.journal[0];
      const from = first?.kind === "start" ? first.from : undefined;
      const same = d.runId === a.runId || (a.runId === 0 && d.runId === 1);
      const next = from !== undefined && (from.runId === a.runId || (a.runId === 0 && from.runId === 1));
      if (!same && !next) continue;
      const found =
        a.kind === "signal"
          ? got.signals.has(a.key) || (next && from?.reason === "continue-as-new" && got.before.has(a.key))
          : got.updates.has(a.key);
      if (!found)
        this.violate(
          "exactlyOnce",
          `${a.what} was acknowledged, but run ${d.runId} of ${a.id}${same ? "" : ` (${from?.reason} of run ${from?.runId})`} does not hold it: ${summary(d.journal)}`,
        );
    }
  }

  /**
   * A run that replaced the one the last check saw (and nothing between them) holds what that one
   * held: a reset copies every signal and update, and continue-as-new hands on what its code did
   * not take (and the outcomes of the updates it applied).
   */
  private handedOn(details: ReadonlyMap<string, RunDetail>, delivered: ReadonlyMap<string, Delivered>): void {
    for (const [id, d] of details) {
      const got = delivered.get(id) as Delivered;
      const before = this.seen.get(id);
      this.seen.set(id, { runId: d.runId, got });
      const first = d.journal[0];
      const from = first?.kind === "start" ? first.from : undefined;
      if (before === undefined || from === undefined || from.runId !== before.runId || d.runId === before.runId) continue;
      const lost = [
        ...[...before.got.signals.keys()].filter(
          (k) => unique(k) && !got.signals.has(k) && !(from.reason === "continue-as-new" && got.before.has(k)),
        ),
        ...[...before.got.updates.keys()].filter((k) => !got.updates.has(k)).map((k) => `update ${k}`),
      ];
      if (lost.length > 0)
        this.violate(
          "exactlyOnce",
          `run ${d.runId} of ${id} (${from.reason} of run ${from.runId}) lost ${lost.join(", ")}: ${summary(d.journal)}`,
        );
    }
  }
}

function unique(key: string): boolean {
  return /^\d{4,}$/.test(key) || key.includes(".r");
}

function deliveredBy(journal: readonly JournalRecord[]): Delivered {
  const signals = new Map<string, number>();
  const updates = new Map<string, number>();
  const before = new Set<string>();
  const count = (m: Map<string, number>, k: unknown): void => void m.set(String(k), (m.get(String(k)) ?? 0) + 1);
  for (const r of journal) {
    if (r.kind === "signal") count(signals, r.value);
    else if (r.kind === "update") count(updates, r.id);
    else if (r.kind === "start") {
      if (r.signal !== undefined) count(signals, r.signal.value);
      if (r.update !== undefined) count(updates, r.update.id);
      for (const m of r.carried?.messages ?? []) {
        if (m.kind === "signal") count(signals, m.value);
        else if (m.kind === "update") count(updates, m.id);
      }
      // Outcomes of updates earlier runs applied: a repeated ID is answered from them, never applied again.
      for (const u of r.carried?.updates ?? []) count(updates, u.id);
      for (const o of (r.input as Program | undefined)?.before ?? []) before.add(o.slice(o.indexOf("=") + 1));
    }
  }
  return { signals, updates, before };
}

function summary(journal: readonly JournalRecord[]): string {
  return journal
    .map((r) => (r.kind === "signal" ? `signal ${r.name}=${String(r.value)}` : r.kind === "update" ? `update ${r.id}` : r.kind))
    .join(", ");
}
