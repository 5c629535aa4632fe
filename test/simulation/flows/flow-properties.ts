/** The properties the flow simulation checks, each a promise the engine makes to its users. */
export const FLOW_PROPERTIES = {
  schedules: "a schedule starts each instant its overlap, catch-up and pause state say, once, never early, across crashes",
  limits: "a limit's bodies never exceed its concurrency or rate, timed-out and cancelled bodies are aborted, permits come back",
  windows: "every acknowledged batch or debounced event reaches the run the model says, once",
  tokens: "a completion token is answered once: the first acknowledged answer is the run's result, later ones are refused",
  progress:
    "each attempt of a heartbeating step resumes from the progress the attempt before it reported, and the run ends with all its work",
  patches:
    "a run that passed a patched point under old code keeps the old path; runs reaching it under new code take the new one; deprecatePatch replays runs that took the new one, and stops, with a NonDeterminismError, those that took the old",
  dedup:
    "an update retried with its ID is answered from its first outcome, not applied again, while its run or a run that replaced it within the idempotency window knows it; otherwise it is applied",
  retention:
    "a run that ended within the retention is listed, described, found by listWhere and the data-directory reader; one past it is in none of them, never comes back across crashes, and its ID starts over at run 1",
  calls: "client calls give the outcomes the reference model predicts",
  codec: "under a key rotated at every open, each engine seals with its newest key and reads what every older key sealed",
  recovery: "opens every image a power loss leaves, refuses work after a failed sync, and answers every call",
  unhandled: "lets no rejection escape unhandled",
} as const;

export type FlowProperty = keyof typeof FLOW_PROPERTIES;

/** A property the engine broke, with the trace of the plan that broke it. */
export class FlowViolation extends Error {
  trace: string[] = [];

  constructor(
    readonly property: FlowProperty,
    message: string,
  ) {
    super(`${property}: ${message}`);
    this.name = "FlowViolation";
  }
}
