import { expect } from "chai";
import type { Regression } from "./regressions.js";
import { replay, scanSeed, shrink, shrunkText, type Simulation } from "./seed-scanner.js";

/** The seeds a test run checks, and how long it gives each. */
export interface SeedSuite<P extends string> {
  readonly first: number;
  readonly seeds: number;
  /** The test's time per seed (ms), for its timeout. */
  readonly msPerSeed: number;
  /** Time to shrink the first counterexample of a property that fails. */
  readonly shrinkMs: number;
  /** Each property's test title: what the engine promises. */
  readonly specs: Readonly<Record<P, string>>;
  /** The seed run twice to see it runs the same way. */
  readonly sameSeed: number;
}

/**
 * A mocha suite over a simulation's seeds: one test for the harness itself, one per property (each
 * failing with its first seed's counterexample, shrunk), and one that the same seed runs the same way
 * twice. A failure reproduces with the line the shrunk counterexample prints.
 */
export function describeSeeds<Input, P extends string>(title: string, sim: Simulation<Input, P>, suite: SeedSuite<P>): void {
  describe(title, function () {
    this.timeout(suite.seeds * suite.msPerSeed + Object.keys(sim.properties).length * (suite.shrinkMs + 5_000));

    const first = new Map<P, { seed: number; message: string; count: number }>();
    const crashes: string[] = [];

    before(async () => {
      for (let seed = suite.first; seed < suite.first + suite.seeds; seed++) {
        const outcome = await scanSeed(sim, seed);
        if (outcome.crash !== undefined)
          crashes.push(`seed ${seed}: ${outcome.crash instanceof Error ? outcome.crash.stack : String(outcome.crash)}`);
        for (const v of outcome.violations) {
          const seen = first.get(v.property);
          if (seen === undefined) first.set(v.property, { seed, message: v.message, count: 1 });
          else seen.count++;
        }
      }
    });

    it(`runs ${suite.seeds} generated ${sim.noun}s without a failure of the harness itself`, () => {
      expect(crashes, crashes.join("\n\n")).to.deep.equal([]);
    });

    for (const property of Object.keys(sim.properties) as P[]) {
      it(suite.specs[property], async () => {
        const found = first.get(property);
        if (found === undefined) return;
        const shrunk = await shrink(sim, found.seed, property, suite.shrinkMs);
        const summary = `${found.count} of ${suite.seeds} ${sim.noun}s fail; the first, seed ${found.seed}: ${found.message}`;
        throw new Error(shrunk === undefined ? summary : `${summary}\n\nshrunk:\n${shrunkText(sim, shrunk)}`);
      });
    }

    it(`runs one ${sim.noun} the same way every time`, async () => {
      const seed = suite.sameSeed;
      const a = await replay(sim, seed, undefined, undefined);
      const b = await replay(sim, seed, undefined, undefined);
      expect(b.input).to.deep.equal(a.input);
      expect(b.report?.trace ?? [], "the second run's trace").to.deep.equal(a.report?.trace ?? []);
      expect((a.report?.trace.length ?? 0) > sim.actions(a.input), "the trace records the actions").to.equal(true);
    });
  });
}

/** A mocha suite replaying each saved regression for its property. */
export function describeRegressions<Input, P extends string>(
  title: string,
  sim: Simulation<Input, P>,
  regressions: ReadonlyMap<string, Regression<Input, P>>,
  specs: Readonly<Record<P, string>>,
): void {
  describe(title, function () {
    this.timeout(60_000);
    for (const [name, r] of regressions) {
      it(`${name}: ${specs[r.property]}`, async () => {
        const report = await sim.run(r.schedule, { only: r.property }).catch((e: unknown) => e);
        const violations =
          report instanceof Error ? [report.message] : (report as Awaited<ReturnType<typeof sim.run>>).violations.map((v) => v.message);
        expect(violations, `once found: ${r.found}`).to.deep.equal([]);
      });
    }
  });
}
