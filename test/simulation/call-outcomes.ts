import { isDeepStrictEqual } from "node:util";
import { FuseeError, StorageError } from "@fusee/runtime";
import { normalize } from "./checks.js";
import type { Generation } from "./ledger.js";
import type { Expectation } from "./model.js";
import type { ClientCall } from "./program.js";
import type { Property } from "./properties.js";
import { errorClass } from "./sim-workflow.js";

/** A client call made on an engine, and how it settled. */
export interface Call {
  readonly action: ClientCall;
  readonly gen: Generation;
  settled: boolean;
  /** Settled while its engine was still the live one. */
  settledAlive: boolean;
  ok: boolean;
  value: unknown;
  error: unknown;
}

/** Makes a call and records how it settles. */
export function settle(action: ClientCall, gen: Generation, make: () => Promise<unknown>): Call {
  const c: Call = { action, gen, settled: false, settledAlive: false, ok: false, value: undefined, error: undefined };
  let promise: Promise<unknown>;
  try {
    promise = make();
  } catch (e) {
    promise = Promise.reject(e);
  }
  promise.then(
    (value) => {
      c.settled = true;
      c.settledAlive = gen.alive;
      c.ok = true;
      c.value = value;
    },
    (error: unknown) => {
      c.settled = true;
      c.settledAlive = gen.alive;
      c.error = error;
    },
  );
  return c;
}

/** Judges a settled call's outcome against what the model expected of it. */
export function judge(what: string, expected: Expectation, c: Call, violate: (property: Property, detail: string) => void): void {
  if (!c.ok && c.error instanceof StorageError)
    return violate("recovery", `${what} failed with ${String(c.error)} though no fault was placed`);
  if (!c.ok && !(c.error instanceof FuseeError)) return violate("results", `${what} threw ${String(c.error)}, which is not a FuseeError`);
  if (expected.outcome === "any") return;
  if (expected.outcome === "ok") {
    if (!c.ok)
      return violate(
        "results",
        `${what} was refused with ${errorClass(c.error)} (${(c.error as Error).message}); the model expected it to succeed`,
      );
    if ("value" in expected && !isDeepStrictEqual(normalize(c.value), expected.value)) {
      return violate("results", `${what} returned ${JSON.stringify(c.value)}; the model expected ${JSON.stringify(expected.value)}`);
    }
    return;
  }
  if (c.ok) return violate("results", `${what} succeeded; the model expected ${expected.errorClass}`);
  if (errorClass(c.error) !== expected.errorClass) {
    return violate(
      "results",
      `${what} failed with ${errorClass(c.error)} (${(c.error as Error).message}); the model expected ${expected.errorClass}`,
    );
  }
}
