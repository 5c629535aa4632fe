import { outsideSteps } from "./run-binding.js";

/** A run whose code is settling after a record. */
export interface Settling {
  /** The code settled: the run goes on with its next record. */
  settled(): void;
}

/**
 * Runs whose code is settling after a record, in `settling[0, settlingCount)`; each goes on once
 * every microtask of this turn ran. The list of the turn before is kept, emptied, for the next:
 * with thousands of runs a fresh list would grow (and be copied) anew every turn. It is emptied by
 * overwriting its slots, not by `length = 0`, which would give its capacity back.
 */
let settling: Settling[] = [];
let settlingCount = 0;
let spare: Settling[] = [];
/** How many runs of the list being settled go on in this turn. */
let readyCount = 0;
let turnArmed = false;

/**
 * Lets every microtask of the workflow code run before the executor's next record applies. All runs
 * waiting in one turn of the event loop share one `setImmediate`, and none holds a promise for it.
 */
export function afterTurn(run: Settling): void {
  settling[settlingCount++] = run;
  if (turnArmed) return;
  turnArmed = true;
  setImmediate(nextTurn);
}

function nextTurn(): void {
  turnArmed = false;
  const ready = settling;
  readyCount = settlingCount;
  // Runs that settle again during this turn go to the other list, for the next turn.
  settling = spare;
  settlingCount = 0;
  outsideSteps(ready, settleAll);
  spare = ready;
}

function settleAll(this: Settling[]): void {
  const n = readyCount;
  for (let i = 0; i < n; i++) {
    const run = this[i] as Settling;
    // The slot lets go of the run at once: the list outlives this turn.
    this[i] = DONE;
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

/** What an emptied slot holds, so the list keeps one kind of element. */
const DONE: Settling = { settled: () => undefined };
