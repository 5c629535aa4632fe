import type { ExportedRecord, ExportedValue } from "@fusee/runtime";

/** What an event is; `other` stands for a record kind this version of the UI does not know. */
export type EventKind =
  "run" | "step" | "timer" | "update" | "child" | "signal" | "patch" | "attributes" | "cancel" | "completion" | "other";

/** A failed attempt of a step: when it began (the call, or the end of the back-off before it), when it failed, why. */
export interface FailedAttempt {
  readonly attempt: number;
  readonly from: number;
  readonly to: number;
  readonly retryAt: number;
  readonly error: ExportedValue | undefined;
}

/**
 * One thing that happened to a run, made of the journal records that belong together: a step call
 * with its failed attempts and heartbeats, a timer set and fired, an update and its answer, a child
 * started and finished; a signal, a patch, the run's start and its finish stand alone.
 */
export interface JournalEvent {
  readonly kind: EventKind;
  /** The timeline's lane: one per step call, timer, update name and child; signals share one, as do the run's start and finish. */
  readonly lane: string;
  readonly from: number;
  readonly to: number;
  readonly label: string;
  /** Where its records are in the journal. */
  readonly positions: readonly number[];
  readonly failed: boolean;
  /** Not over where the journal ends: a step between attempts or running, a timer not fired, an update not answered, a child not finished. */
  readonly open: boolean;
  /** What it gave: a step's result or error, a signal's value, a run's input or outcome, an update's answer. */
  readonly payload?: ExportedValue;
  /** What it was given, shown before its outcome: an update's argument. */
  readonly input?: ExportedValue;
  /** The call number of a step, timer or child. */
  readonly seq?: number;
  /** A step's, signal's or update's name; a patch's ID. */
  readonly name?: string;
  readonly childId?: string;
  /** A step's failed attempts, in order. */
  readonly attempts: readonly FailedAttempt[];
  /** When a step's final attempt began (the step's bar on the timeline). */
  readonly finalFrom?: number;
  /** A step's heartbeats and the latest progress they reported. */
  readonly heartbeats?: number;
  readonly progress?: ExportedValue;
  /** When a timer is due. */
  readonly until?: number;
  /** An update's ID. */
  readonly updateId?: string;
}

type Draft = { -readonly [K in keyof JournalEvent]: JournalEvent[K] } & { attempts: FailedAttempt[]; positions: number[] };

/**
 * Groups a run's journal into events, in the order each began. A step's first attempt is taken to
 * start at the record before it, the moment the code called it.
 *
 * @example
 * journalEvents(journal.records).filter((e) => e.open) // what the run still waits on
 */
export function journalEvents(records: readonly ExportedRecord[]): JournalEvent[] {
  const events: Draft[] = [];
  const steps = new Map<number, Draft>();
  const timers = new Map<number, Draft>();
  const children = new Map<number, Draft>();
  const updates = new Map<string, Draft>();
  /** When the next attempt of a step call began: the end of the back-off after a failed one. */
  const nextStart = new Map<number, number>();
  const add = (event: Omit<Draft, "attempts" | "failed" | "open"> & Partial<Draft>): Draft => {
    const draft: Draft = { failed: false, open: false, attempts: [], ...event };
    events.push(draft);
    return draft;
  };
  let previousAt = records[0]?.at ?? 0;
  records.forEach((r, position) => {
    const seq = typeof r.seq === "number" ? r.seq : -1;
    const at = r.at;
    const payload = r.payload === undefined ? {} : { payload: r.payload };
    switch (r.kind) {
      case "start":
        add({ kind: "run", lane: "run", from: at, to: at, label: startLabel(r), positions: [position], ...payload });
        break;
      case "finish":
        add({
          kind: "run",
          lane: "run",
          from: at,
          to: at,
          label: `finished ${String(r.status)}`,
          positions: [position],
          failed: r.status !== "ok",
          ...payload,
        });
        break;
      case "attempt":
      case "heartbeat":
      case "step": {
        let step = steps.get(seq);
        if (step === undefined) {
          step = add({ kind: "step", lane: "", label: "", from: previousAt, to: at, positions: [], seq, open: true });
          steps.set(seq, step);
        }
        step.positions.push(position);
        step.to = at;
        if (typeof r.name === "string") step.name = r.name;
        if (r.kind === "attempt") {
          const retryAt = typeof r.retryAt === "number" ? r.retryAt : at;
          const from = nextStart.get(seq) ?? step.from;
          step.attempts.push({
            attempt: typeof r.attempt === "number" ? r.attempt : step.attempts.length + 1,
            from,
            to: at,
            retryAt,
            error: r.payload,
          });
          nextStart.set(seq, retryAt);
        } else if (r.kind === "heartbeat") {
          step.heartbeats = (step.heartbeats ?? 0) + 1;
          if (r.payload !== undefined) step.progress = r.payload;
        } else {
          step.open = false;
          step.failed = r.ok === false;
          step.finalFrom = Math.min(nextStart.get(seq) ?? step.from, at);
          if (r.payload !== undefined) step.payload = r.payload;
        }
        break;
      }
      case "timer": {
        const until = typeof r.until === "number" ? r.until : at;
        timers.set(
          seq,
          add({ kind: "timer", lane: `timer #${seq}`, from: at, to: at, label: "", positions: [position], seq, until, open: true }),
        );
        break;
      }
      case "fired": {
        const timer = timers.get(seq);
        if (timer === undefined) break;
        timer.positions.push(position);
        timer.to = at;
        timer.open = false;
        break;
      }
      case "signal":
        add({
          kind: "signal",
          lane: "signals",
          from: at,
          to: at,
          label: `signal ${String(r.name)}`,
          positions: [position],
          name: String(r.name),
          ...payload,
        });
        break;
      case "update": {
        const name = String(r.name);
        const update = add({
          kind: "update",
          lane: `update ${name}`,
          from: at,
          to: at,
          label: "",
          positions: [position],
          name,
          updateId: String(r.id),
          open: true,
          ...(r.payload !== undefined ? { input: r.payload } : {}),
        });
        updates.set(String(r.id), update);
        break;
      }
      case "update-result": {
        const update = updates.get(String(r.id));
        if (update === undefined) break;
        update.positions.push(position);
        update.to = at;
        update.open = false;
        update.failed = r.ok === false;
        if (r.payload !== undefined) update.payload = r.payload;
        break;
      }
      case "child": {
        const childId = String(r.childId);
        const started = r.ok !== false;
        children.set(
          seq,
          add({
            kind: "child",
            lane: `child ${childId}`,
            from: at,
            to: at,
            label: "",
            positions: [position],
            seq,
            childId,
            open: started,
            failed: !started,
            ...payload,
          }),
        );
        break;
      }
      case "child-result": {
        const child = children.get(seq);
        if (child === undefined) break;
        child.positions.push(position);
        child.to = at;
        child.open = false;
        child.failed = r.status !== "ok";
        child.label = `child ${child.childId ?? ""} ${String(r.status)}`;
        if (r.payload !== undefined) child.payload = r.payload;
        break;
      }
      case "patch":
        add({
          kind: "patch",
          lane: "patches",
          from: at,
          to: at,
          label: `patch ${String(r.id)}`,
          positions: [position],
          name: String(r.id),
        });
        break;
      case "attributes":
        add({ kind: "attributes", lane: "attributes", from: at, to: at, label: attributesLabel(r), positions: [position], ...payload });
        break;
      case "cancel":
        add({ kind: "cancel", lane: "run", from: at, to: at, label: "cancellation requested", positions: [position], ...payload });
        break;
      case "completion":
        add({
          kind: "completion",
          lane: "completions",
          from: at,
          to: at,
          label: `completion ${r.ok === false ? "failed" : "answered"}`,
          positions: [position],
          failed: r.ok === false,
          ...payload,
        });
        break;
      default:
        add({ kind: "other", lane: String(r.kind), from: at, to: at, label: String(r.kind), positions: [position], ...payload });
    }
    previousAt = at;
  });
  for (const e of events) finish(e);
  return events;
}

/** Fills in what only the whole group tells: a step's lane and label, a timer's, an update's, a child's. */
function finish(e: Draft): void {
  if (e.kind === "step") {
    const name = e.name ?? "?";
    e.lane = `step ${name} #${String(e.seq)}`;
    const tries = e.attempts.length + (e.open ? 0 : 1);
    const last = e.attempts.at(-1);
    if (!e.open) e.label = `${name} ${e.failed ? "failed" : "ok"}${tries > 1 ? ` after ${tries} attempts` : ""}`;
    else if (last !== undefined) e.label = `${name}: attempt ${last.attempt} failed, attempt ${last.attempt + 1} due`;
    else e.label = `${name} running`;
  } else if (e.kind === "timer") {
    e.label = e.open ? "timer set" : "timer fired";
  } else if (e.kind === "update") {
    e.label = `update ${e.name ?? ""} ${e.open ? "accepted" : e.failed ? "failed" : "answered"}`;
  } else if (e.kind === "child" && e.label === "") {
    e.label = e.failed ? `child ${e.childId ?? ""} could not start` : `child ${e.childId ?? ""} started`;
  }
}

function startLabel(r: ExportedRecord): string {
  const from = r.from as { runId?: number; reason?: string } | undefined;
  const parts = [`started ${String(r.type)}`];
  if (from !== undefined && typeof from === "object") parts.push(`(${String(from.reason)} of run ${String(from.runId)})`);
  if (r.update !== undefined) parts.push("with an update");
  if (r.signal !== undefined) parts.push("with a signal");
  return parts.join(" ");
}

function attributesLabel(r: ExportedRecord): string {
  const removed = Array.isArray(r.removed) ? r.removed.map(String) : [];
  return removed.length === 0 ? "attributes set" : `attributes set, ${removed.join(", ")} removed`;
}
