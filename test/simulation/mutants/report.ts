import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * What one scan of the seeds found, as a probe (`probe.ts`, `cluster-probe.ts`, the runtime's `lease-probe.ts`) prints it in one
 * line of JSON for the runner (`main.ts`): with `--baseline`, every seed's failures; otherwise the
 * first seed that fails in a way the baseline does not, and whether that failure reproduces.
 */
export interface ProbeReport {
  /**
   * Which simulation scanned: the deterministic single-process one, the PostgreSQL logs of several
   * writers in one process (`leases`), or the cluster of processes on PostgreSQL.
   */
  readonly generator: "single-process" | "leases" | "cluster";
  /** Where `@fusee/runtime` resolved: the runner checks it is the copy's, not the workspace's. */
  readonly runtime: string;
  /** Seeds scanned, the failing one included. */
  readonly seeds: number;
  /** Time spent scanning them. */
  readonly seconds: number;
  /** With `--baseline`: the failures of every seed, as `seed:property` (`seed:crash` for a failure of the harness). */
  readonly failures?: readonly string[];
  readonly caught?: {
    readonly seed: number;
    /** The property violated first, or `crash` when the harness itself failed. */
    readonly property: string;
    readonly message: string;
    /**
     * The cluster's and the leases' schedules are not replayed exactly (the processes' interleaving is the
     * machine's): the seed's schedule run once more, and its violation of the same property, if any.
     */
    readonly rerun?: string | undefined;
    readonly shrunk?: {
      readonly path: string;
      readonly shrinks: number;
      readonly actions: number;
      readonly violation: string;
      /** What `--seed S --path P --only PROPERTY` gives: the violation's message, or undefined when none. */
      readonly replayed: string | undefined;
    };
  };
}

/** The file `@fusee/runtime` resolves to from here, links followed. */
export const runtimeLocation = (): string => realpathSync(fileURLToPath(import.meta.resolve("@fusee/runtime")));
