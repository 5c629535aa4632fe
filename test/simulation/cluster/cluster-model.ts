/*
 * The reference model of the cluster simulation: what each run must hold given which calls were
 * acknowledged, which were refused and which are in doubt (their process died, or the call failed
 * in a way that does not say whether it happened). It computes each update's answer itself.
 */
import { isDeepStrictEqual } from "node:util";
import { FINISHED, type Bumped, type Inspection } from "./wire.js";

/** A call acknowledged, in doubt (it may or may not have been applied), or refused by its target (it must not be applied). */
export type Outcome = "acked" | "doubt" | "refused";

interface RunModel {
  started: Outcome | undefined;
  readonly tags: Map<string, Outcome>;
  /** By tag: a client's update ID, or the tag a relay's update carries in its argument. */
  readonly updates: Map<string, { readonly by: number; outcome: Outcome; answer?: Bumped }>;
  /** The answer the next update gets, or undefined once an update is in doubt for good. */
  applied: Bumped | undefined;
  cancel: Outcome | undefined;
  /** A terminate through a non-owner: acknowledged (the run must have ended `terminated`) or in doubt. */
  terminate: Outcome | undefined;
  /** A reset was sent: the ID may have more than one run. */
  reset: boolean;
}

/** A way the cluster disagrees with the model. */
export interface Disagreement {
  readonly property: ClusterProperty;
  readonly detail: string;
}

export const CLUSTER_PROPERTIES = {
  exactlyOnce: "every acknowledged signal, update and cancel is applied exactly once, and nothing else is applied",
  answers: "acknowledged update answers equal the model's",
  runsKept: "no acknowledged run is lost",
  closePolicy: "each child of a parent that ended is closed once as its close policy says",
  schedules: "each instant of a schedule starts once, across the loss of its shard's owner",
  batches: "each acknowledged batch event is in its batch's run, once unless retried without an event ID, and no batch outgrows its size",
  fencing: "at most one owner writes a shard per epoch, under a lease it holds",
  live: "the cluster answers every call once it has an owner for every shard",
} as const;
export type ClusterProperty = keyof typeof CLUSTER_PROPERTIES;

export class ClusterModel {
  private readonly runs = new Map<string, RunModel>();

  /** `renew`: the IDs whose runs continue as new, by how many messages each run applies first. */
  constructor(private readonly renew: Readonly<Record<string, number>>) {}

  private run(id: string): RunModel {
    let r = this.runs.get(id);
    if (r === undefined) {
      r = {
        started: undefined,
        tags: new Map(),
        updates: new Map(),
        applied: { count: 0, total: 0 },
        cancel: undefined,
        terminate: undefined,
        reset: false,
      };
      this.runs.set(id, r);
    }
    return r;
  }

  started(id: string, outcome: Outcome): void {
    this.run(id).started = outcome;
  }

  signal(id: string, tag: string, outcome: Outcome): void {
    this.run(id).tags.set(tag, outcome);
  }

  cancel(id: string, outcome: Outcome): void {
    // A refused cancel leaves the run as it was: it must not end.
    if (outcome !== "refused") this.run(id).cancel = outcome;
  }

  /** A start that may have happened (an in-doubt `signalWithStart`) does not undo one acknowledged before. */
  startedAtLeast(id: string, outcome: Outcome): void {
    const r = this.run(id);
    if (r.started !== "acked") r.started = outcome;
  }

  terminate(id: string, outcome: Outcome): void {
    const r = this.run(id);
    if (r.terminate !== "acked") r.terminate = outcome;
  }

  /** A reset of the run was sent (its outcome changes no message's). */
  reset(id: string): void {
    this.run(id).reset = true;
  }

  /** An update its target refused: it must not be in the journal, and later answers are as before it. */
  updateRefused(id: string, tag: string, by: number): void {
    this.run(id).updates.set(tag, { by, outcome: "refused" });
  }

  /** What an update of `by` must answer, when the model knows (no earlier update of the run is in doubt). */
  expectedUpdate(id: string, by: number): Bumped | undefined {
    const a = this.run(id).applied;
    return a === undefined ? undefined : { count: a.count + 1, total: a.total + by };
  }

  /** An update acknowledged with `answer`; returns the disagreement with the model, if any. */
  updated(id: string, uid: string, by: number, answer: Bumped): Disagreement | undefined {
    const r = this.run(id);
    const expected = this.expectedUpdate(id, by);
    r.updates.set(uid, { by, outcome: "acked", answer });
    r.applied = expected;
    if (expected !== undefined && !isDeepStrictEqual(answer, expected))
      return {
        property: "answers",
        detail: `update ${uid} of ${id} answered ${JSON.stringify(answer)}; the model says ${JSON.stringify(expected)}`,
      };
    return undefined;
  }

  /** An update that was never acknowledged: it may have been applied, so later answers are unknown. */
  updateInDoubt(id: string, uid: string, by: number): void {
    const r = this.run(id);
    r.updates.set(uid, { by, outcome: "doubt" });
    r.applied = undefined;
  }

  ids(): string[] {
    return [...this.runs].filter(([, r]) => r.started !== undefined).map(([id]) => id);
  }

  /**
   * Compares what a run's journal holds (undefined: the cluster does not know the run) with the
   * model. The journal of a run that continued as new shows only its last run: what every run of
   * the ID applied is read from the state the runs handed on, as its code saw it.
   */
  compare(id: string, seen: Inspection | null): Disagreement[] {
    const r = this.run(id);
    const out: Disagreement[] = [];
    if (seen === null) {
      if (r.started === "acked") out.push({ property: "runsKept", detail: `the acknowledged run ${id} is unknown to the cluster` });
      return out;
    }
    const renews = this.renew[id] !== undefined;
    if (renews && seen.state === undefined) return [{ property: "live", detail: `${id}, which continues as new, answered no state` }];
    const tags = renews ? seen.state!.tags : seen.tags;
    const updates = renews ? seen.state!.updates.map((tag) => ({ id: tag, tag })) : seen.updates;
    const counts = new Map<string, number>();
    for (const t of tags) counts.set(t, (counts.get(t) ?? 0) + 1);
    for (const [tag, n] of counts) {
      const o = r.tags.get(tag);
      if (o === undefined) out.push({ property: "exactlyOnce", detail: `${id} holds signal ${tag}, which was never sent to it` });
      else if (o === "refused") out.push({ property: "exactlyOnce", detail: `${id} holds signal ${tag}, which was refused` });
      else if (n > 1) out.push({ property: "exactlyOnce", detail: `${id} holds signal ${tag} ${n} times (${o})` });
    }
    for (const [tag, o] of r.tags)
      if (o === "acked" && !counts.has(tag))
        out.push({ property: "exactlyOnce", detail: `the acknowledged signal ${tag} is missing from ${id}` });
    // Each update's journal IDs by its tag (a relay's updates get IDs the engine derives).
    const accepted = new Map<string, string[]>();
    for (const u of updates) accepted.set(u.tag, [...(accepted.get(u.tag) ?? []), u.id]);
    for (const [tag, ids] of accepted) {
      const o = r.updates.get(tag)?.outcome;
      if (o === undefined) out.push({ property: "exactlyOnce", detail: `${id} holds update ${tag}, which was never sent to it` });
      else if (o === "refused") out.push({ property: "exactlyOnce", detail: `${id} holds update ${tag}, which was refused` });
      else if (ids.length > 1) out.push({ property: "exactlyOnce", detail: `${id} accepted update ${tag} ${ids.length} times` });
    }
    for (const [tag, u] of r.updates) {
      if (u.outcome !== "acked") continue;
      const ids = accepted.get(tag) ?? [];
      // Answers were checked when they came; the journal of a renewing ID may no longer hold them.
      const results = renews ? [{ value: u.answer }] : seen.results.filter((x) => ids.includes(x.id));
      if (ids.length !== 1 || results.length !== 1) {
        out.push({
          property: "exactlyOnce",
          detail: `the acknowledged update ${tag} of ${id} is in the journal ${ids.length} times with ${results.length} answers`,
        });
      } else if (!isDeepStrictEqual(results[0]?.value, u.answer)) {
        out.push({
          property: "answers",
          detail: `update ${tag} of ${id} was answered ${JSON.stringify(u.answer)}, but the journal holds ${JSON.stringify(results[0])}`,
        });
      }
    }
    const cancelsAllowed = r.cancel === undefined ? 0 : 1;
    if (seen.cancels > cancelsAllowed)
      out.push({ property: "exactlyOnce", detail: `${id} holds ${seen.cancels} cancels; ${cancelsAllowed} was sent` });
    if (r.cancel === "acked" && seen.cancels !== 1)
      out.push({ property: "exactlyOnce", detail: `the acknowledged cancel of ${id} is in its journal ${seen.cancels} times` });
    if (r.cancel === "acked" && seen.status !== "cancelled")
      out.push({ property: "exactlyOnce", detail: `${id} was cancelled (acknowledged) but its status is ${seen.status}` });
    if (r.terminate === "acked" && seen.status !== "terminated")
      out.push({ property: "exactlyOnce", detail: `${id} was terminated (acknowledged) but its status is ${seen.status}` });
    const terminated = r.terminate !== undefined && seen.status === "terminated";
    if (r.cancel === undefined && FINISHED.has(seen.status) && !terminated)
      out.push({ property: "exactlyOnce", detail: `${id} was never cancelled but it ended ${seen.status}` });
    if (seen.state !== undefined && !renews) {
      const sorted = (xs: readonly string[]): string[] => [...xs].sort();
      const accepted = seen.updates.length;
      if (!isDeepStrictEqual(sorted(seen.state.tags), sorted(seen.tags)) || seen.state.count !== accepted)
        out.push({
          property: "exactlyOnce",
          detail: `${id}'s workflow holds ${JSON.stringify(seen.state)}; its journal has signals ${JSON.stringify(seen.tags)} and ${accepted} updates`,
        });
    }
    if (seen.runs !== 1 && !renews && !r.reset)
      out.push({ property: "exactlyOnce", detail: `${id} has ${seen.runs} runs; nothing replaced its first` });
    return out;
  }
}
