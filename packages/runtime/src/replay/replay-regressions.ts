import { existsSync } from "node:fs";
import { basename } from "node:path";
import { ConfigError, NonDeterminismError } from "../core/errors.js";
import type { WorkflowClass } from "../workflow/registry.js";
import { exportFilesIn, Replayer, type ReplayerOptions } from "./replayer.js";

/** Defines one test, as mocha's (or jest's, or node:test's) `it` does. */
export type DefineTest = (title: string, body: () => Promise<void>) => unknown;

/** Options of {@link replayRegressions}. */
export interface ReplayRegressionsOptions extends ReplayerOptions {
  /** The function that defines a test; the global `it` by default. */
  readonly it?: DefineTest;
}

/**
 * Keeps exported production journals as regression tests: defines one test per export file in `dir`,
 * which fails with the first difference when the current code no longer replays that journal. Call
 * it where tests are defined (inside a `describe`, at load time).
 *
 * @throws ConfigError when `dir` does not exist or there is no global `it` and none was passed.
 * @example
 * describe("recorded journals", () => {
 *   replayRegressions(new URL("./journals", import.meta.url).pathname, [Pay, Ship]);
 * });
 */
export function replayRegressions(dir: string, workflows: readonly WorkflowClass[], options: ReplayRegressionsOptions = {}): void {
  const it = options.it ?? (globalThis as { it?: DefineTest }).it;
  if (typeof it !== "function") {
    throw new ConfigError(
      "replayRegressions defines tests with the global it(), which is missing; call it inside a mocha suite or pass { it }",
    );
  }
  if (!existsSync(dir)) throw new ConfigError(`replayRegressions: the folder of exported journals ${dir} does not exist`);
  const files = exportFilesIn(dir);
  const replayer = new Replayer(options).register(...workflows);
  if (files.length === 0) {
    it(`replays the journals exported to ${dir}`, () =>
      Promise.reject(new ConfigError(`${dir} holds no exported journals (*.json); export some with fusee export or exportFromDir`)));
    return;
  }
  for (const file of files) {
    it(`replays ${basename(file)}`, async () => {
      const result = await replayer.replayFile(file);
      if (result.ok) return;
      const cause = result.cause;
      const message = `${file}: ${result.error ?? "the replay failed"}`;
      throw cause instanceof NonDeterminismError ? new NonDeterminismError(message, { cause }) : new Error(message, { cause });
    });
  }
}
