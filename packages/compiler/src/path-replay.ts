import { certainlyDiffer } from "./argument-paths.js";
import { type Assignment, assignments, type Variable, variablesOf } from "./path-choices.js";
import { type Leaf, leafName, type Node } from "./path-nodes.js";
import { type Choice, type PathEvent, walk } from "./path-walk.js";

/** Where the code replaying a recorded path first asks for something else than the journal holds. */
export interface Difference {
  /** How many records of the journal replayed before it. */
  readonly position: number;
  /** What the journal holds there; absent at the journal's end. */
  readonly holds?: PathEvent;
  /** What the code asked for there; absent when the code ended. */
  readonly asked?: PathEvent;
  /** The records of the recorded path, in order. */
  readonly journal: readonly PathEvent[];
  /** What the code does from the difference on, for naming the change. */
  readonly next: readonly PathEvent[];
}

/** One way through the recorded code, and what replaying it with the new code does. */
export interface PathOutcome {
  readonly values: Assignment["values"];
  /** The recorded path has a point where a run waits, so runs of it can be in flight. */
  readonly waits: boolean;
  /** The first difference a run in flight on this path meets, if any. */
  readonly inFlight?: Difference;
  /** The first difference the replay of a finished run of this path meets, if any. */
  readonly finished?: Difference;
  /**
   * The first step call, before a run in flight waits, whose arguments are written otherwise than
   * recorded but may have the same value (`Number(n)` for `n`): it breaks the run only if they differ.
   */
  readonly maybeInFlight?: Difference;
  /** Keys of the steps the path records before its last wait: results runs in flight hold. */
  readonly recordedInFlight: readonly string[];
}

/** Events the new code makes past a difference that are kept for messages. */
const NEXT_EVENTS = 40;

/**
 * Replays every way through an entry point's recorded code with its new code: the recorded path's
 * records are the journal, each point where the path waits is a run in flight, and the new code
 * must ask for each record in order (patch calls answered from the journal, as the engine does),
 * wait only where the recorded code waited for the same signals, and, for a finished run, end where
 * the journal ends. A handler's records are followed by others in a run's journal, so a handler
 * must match its recorded path to the end.
 */
export function replayPaths(
  old: readonly Node[],
  next: readonly Node[],
  handler: boolean,
): { variables: Variable[]; outcomes: PathOutcome[] } {
  const variables = variablesOf(old, next);
  const outcomes: PathOutcome[] = [];
  for (const assignment of assignments(variables)) outcomes.push(replayOne(old, next, assignment, handler));
  return { variables, outcomes };
}

function replayOne(old: readonly Node[], next: readonly Node[], { choice, values }: Assignment, handler: boolean): PathOutcome {
  const recorded = recordedPath(old, choice);
  const records = recorded.filter((e) => e.kind !== "wait");
  // Waits by the number of records before them; a timer record is a wait of its own, after it.
  const gaps = new Map<number, Extract<PathEvent, { kind: "wait" }>[]>();
  const points: number[] = [];
  let count = 0;
  for (const e of recorded) {
    if (e.kind === "wait") {
      gaps.set(count, [...(gaps.get(count) ?? []), e]);
      points.push(count);
    } else {
      count++;
      if (e.kind === "record" && e.leaf.kind === "call" && (e.leaf.call === "timer" || e.leaf.call === "wait-timer")) points.push(count);
    }
  }
  const deepest = handler ? records.length : Math.max(-1, ...points);
  const { difference, maybe } = match(records, gaps, next, choice);
  const recordedInFlight = records
    .slice(0, Math.max(0, deepest))
    .flatMap((e) => (e.kind === "record" && e.leaf.kind === "step" ? [e.leaf.key] : []));
  // A run waiting after `position` records replays them all before it waits; one further on meets the difference.
  const inFlight = difference !== undefined && (handler || difference.position < deepest) ? difference : undefined;
  const maybeInFlight = maybe !== undefined && (handler || maybe.position < deepest) ? maybe : undefined;
  return {
    values,
    waits: handler || points.length > 0,
    ...(inFlight === undefined ? {} : { inFlight }),
    ...(difference === undefined ? {} : { finished: difference }),
    ...(maybeInFlight === undefined ? {} : { maybeInFlight }),
    recordedInFlight,
  };
}

/** The recorded code's events on one path: its patch calls answer as the choice says, and journal a marker when taken. */
function recordedPath(old: readonly Node[], choice: Choice): PathEvent[] {
  const events: PathEvent[] = [];
  for (const e of walk(old, choice, (id, deprecated) => {
    const taken = !deprecated && choice.patched(id);
    return { taken, marker: taken };
  }))
    events.push(e);
  return events;
}

/**
 * Replays the recorded records with the new code on one choice: the first difference (undefined
 * when it ends where they do), and the first step call whose arguments may differ, which the replay
 * goes past.
 */
function match(
  records: readonly PathEvent[],
  gaps: ReadonlyMap<number, readonly Extract<PathEvent, { kind: "wait" }>[]>,
  next: readonly Node[],
  choice: Choice,
): { difference?: Difference; maybe?: Difference } {
  let i = 0;
  let stopped = false;
  let maybe: Difference | undefined;
  const used = new Set<PathEvent>();
  const events = walk(next, choice, (id) => {
    const held = records[i];
    if (!stopped && held?.kind === "marker" && held.id === id) {
      i++;
      return { taken: true, marker: false };
    }
    return { taken: false, marker: false };
  });
  const differ = (asked: PathEvent | undefined): Difference => {
    stopped = true;
    const rest: PathEvent[] = [];
    for (const e of events) {
      rest.push(e);
      if (rest.length >= NEXT_EVENTS) break;
    }
    const holds = records[i];
    return {
      position: i,
      ...(holds === undefined ? {} : { holds }),
      ...(asked === undefined ? {} : { asked }),
      journal: records,
      next: asked === undefined ? rest : [asked, ...rest],
    };
  };
  const found = (difference: Difference) => ({ difference, ...(maybe === undefined ? {} : { maybe }) });
  for (;;) {
    const step = events.next();
    if (step.done === true) return i < records.length ? found(differ(undefined)) : maybe === undefined ? {} : { maybe };
    const e = step.value;
    if (e.kind === "wait") {
      const free = (gaps.get(i) ?? []).find((w) => !used.has(w) && sameWait(w.leaf, e.leaf));
      if (free === undefined) return found(differ(e));
      used.add(free);
      continue;
    }
    const held = records[i];
    const same = held === undefined ? "differ" : sameRecord(held, e, records);
    if (same === "differ") return found(differ(e));
    if (same === "maybe" && maybe === undefined)
      maybe = { position: i, ...(held === undefined ? {} : { holds: held }), asked: e, journal: records, next: [e] };
    i++;
  }
}

/**
 * Whether the new code's call is the one the journal holds: the same kind and name, and for a step
 * the same arguments when both record them. Arguments written otherwise `maybe` have the same value,
 * unless their number differs, both are values that differ, or the new ones are those of another
 * recorded call of the step (two calls swapped).
 */
function sameRecord(held: PathEvent, asked: PathEvent, records: readonly PathEvent[]): "same" | "differ" | "maybe" {
  if (held.kind !== "record" || asked.kind !== "record") return "differ";
  const h = held.leaf;
  const a = asked.leaf;
  if (h.kind !== a.kind || leafName(h) !== leafName(a)) return "differ";
  if (h.kind !== "step" || a.kind !== "step" || h.args === undefined || a.args === undefined) return "same";
  if (h.args === a.args || (a.argsText !== undefined && h.args === a.argsText)) return "same";
  const other = records.some(
    (r) => r !== held && r.kind === "record" && r.leaf.kind === "step" && r.leaf.name === a.name && r.leaf.args === a.args,
  );
  return other || certainlyDiffer(h.args, a.args) ? "differ" : "maybe";
}

/** Whether a wait of the new code is passed by what ended the recorded wait: the same wait, or signals in common. */
function sameWait(old: Extract<Leaf, { kind: "wait" }>, next: Extract<Leaf, { kind: "wait" }>): boolean {
  if (old.on === next.on) return true;
  const a = signalsOf(old);
  const b = signalsOf(next);
  if (a === undefined || b === undefined)
    return (a === undefined && old.on === "condition") || (b === undefined && next.on === "condition");
  return a.some((s) => b.includes(s));
}

function signalsOf(wait: Extract<Leaf, { kind: "wait" }>): readonly string[] | undefined {
  if (wait.signals !== undefined && wait.signals.length > 0) return wait.signals;
  const m = /^signal "(.*)"$/.exec(wait.on);
  return m === null ? undefined : [m[1] as string];
}
