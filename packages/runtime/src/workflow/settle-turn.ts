import { outsideSteps } from "./run-binding.js";

/** A run whose code is settling after a record. */
export interface Settling {
  /** The code settled: the run goes on with its next record. */
  settled(): void;
}

/** Runs whose code is settling after a record; each goes on once every microtask of this turn ran. */
let settling: Settling[] = [];
/** The list of the turn before, emptied, kept for the next turn: with thousands of runs a fresh list would grow (and be copied) anew every turn. */
let spare: Settling[] = [];
let turnArmed = false;

/**
 * Lets every microtask of the workflow code run before the executor's next record applies. All runs
 * waiting in one turn of the event loop share one `setImmediate`, and none holds a promise for it.
 */
export function afterTurn(run: Settling): void {
  settling.push(run);
  if (turnArmed) return;
  turnArmed = true;
  setImmediate(nextTurn);
}

function nextTurn(): void {
  turnArmed = false;
  const ready = settling;
  settling = spare;
  spare = [];
  outsideSteps(ready, settleAll);
  ready.length = 0;
  spare = ready;
}

function settleAll(this: readonly Settling[]): void {
  for (const run of this) {
    try {
      run.settled();
    } catch (e) {
      // One run's failure must not hold up the others; it still surfaces as an uncaught error.
      queueMicrotask(() => {
        throw e;
      });
    }
  }
}
