/** The properties checked after every action of a schedule. */
export const PROPERTIES = {
  noRerun: "no acknowledged step re-runs",
  replays: "every journal replays",
  statusJournal: "status agrees with the journal",
  results: "results and call outcomes equal the model's",
  runSet: "no run appears or vanishes, and finished runs stay finished",
  retryBudget: "retry budgets hold across restarts",
  abortTold: "an aborted attempt is told",
  stepKeys: "a step's key belongs to its own step",
  recovery: "the engine opens every crash image and stays live",
  unhandled: "no rejection escapes the engine unhandled",
  exactlyOnce: "every acknowledged signal and update is applied exactly once, by the run it went to or the run that replaced it",
  childResults: "a child's result reaches only the run that started the child",
  closePolicy: "close policies are applied whenever a parent's run ends or is replaced",
  attributes: "search attributes and listWhere agree with the model and with each other",
  readers: "the data-directory reader sees the runs, statuses and attributes the engine shows",
} as const;

export type Property = keyof typeof PROPERTIES;

/** A property that did not hold, with where and why. */
export class Violation extends Error {
  /** What the schedule did up to the violation. */
  trace: readonly string[] = [];

  constructor(
    readonly property: Property,
    readonly detail: string,
  ) {
    super(`${PROPERTIES[property]}: ${detail}`);
    this.name = "Violation";
  }
}
