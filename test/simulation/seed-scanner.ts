import fc from "fast-check";

/** A property a run broke, with the trace of what it did up to then. */
export interface SimViolation<P extends string> extends Error {
  readonly property: P;
  readonly trace: readonly string[];
}

/** What a simulation's run of one generated input reports. */
export interface SimReport<P extends string> {
  readonly trace: readonly string[];
  readonly violations: readonly SimViolation<P>[];
}

/**
 * A simulation as the seed scanner drives it: from a seed fast-check generates an input (a schedule
 * of the single-process simulation, a plan of the flows one), the simulation runs it and reports
 * the properties it broke.
 */
export interface Simulation<Input, P extends string> {
  /** What one input is called in messages: "schedule", "flow plan". */
  readonly noun: string;
  readonly properties: Readonly<Record<P, string>>;
  arbitrary(): fc.Arbitrary<Input>;
  /** `only`: check that property alone (a violation of it throws); `collect`: the first violation of each. */
  run(input: Input, options: { readonly only?: P; readonly collect?: boolean }): Promise<SimReport<P>>;
  isViolation(e: unknown): e is SimViolation<P>;
  actions(input: Input): number;
  text(input: Input): string;
  /** The command that replays a shrunk counterexample. */
  reproduce(seed: number, path: string, property: P): string;
}

/** One seed's outcome: what went wrong, if anything. */
export interface SeedOutcome<P extends string> {
  readonly seed: number;
  readonly violations: readonly SimViolation<P>[];
  /** An error that is not a property violation (a bug of the harness itself). */
  readonly crash?: unknown;
  readonly actions: number;
}

/** A counterexample shrunk for one property. */
export interface Shrunk<Input, P extends string> {
  readonly property: P;
  readonly seed: number;
  /** fast-check's path to the shrunk counterexample: `--seed S --path P` replays it. */
  readonly path: string;
  readonly input: Input;
  readonly violation: string;
  readonly shrinks: number;
}

/** Replays one input exactly (the seed's, or the counterexample at `path`) and returns its report. */
export async function replay<Input, P extends string>(
  sim: Simulation<Input, P>,
  seed: number,
  path: string | undefined,
  property: P | undefined,
): Promise<{ input: Input; report: SimReport<P> | undefined; error: unknown }> {
  let input: Input | undefined;
  let report: SimReport<P> | undefined;
  let error: unknown;
  await fc.check(
    fc.asyncProperty(sim.arbitrary(), async (x) => {
      if (input !== undefined) return;
      input = x;
      try {
        report = await sim.run(x, property === undefined ? { collect: true } : { only: property });
      } catch (e) {
        error = e;
      }
    }),
    { seed, numRuns: 1, ...(path !== undefined ? { path } : {}), endOnFailure: true },
  );
  return { input: input as Input, report, error };
}

/** Runs the input of one seed, collecting the first violation of each property. */
export async function scanSeed<Input, P extends string>(sim: Simulation<Input, P>, seed: number): Promise<SeedOutcome<P>> {
  const { input, report, error } = await replay(sim, seed, undefined, undefined);
  const actions = sim.actions(input);
  if (sim.isViolation(error)) return { seed, violations: [error], actions };
  if (error !== undefined) return { seed, violations: [], crash: error, actions };
  return { seed, violations: report?.violations ?? [], actions };
}

/** Shrinks the input of `seed` to a small one that still violates `property` (the only one checked), within `timeLimitMs`. */
export async function shrink<Input, P extends string>(
  sim: Simulation<Input, P>,
  seed: number,
  property: P,
  timeLimitMs: number,
): Promise<Shrunk<Input, P> | undefined> {
  const details = await fc.check(
    fc.asyncProperty(sim.arbitrary(), async (x) => {
      await sim.run(x, { only: property });
    }),
    { seed, numRuns: 1, plugins: [fc.interruptAfterTimeLimit(timeLimitMs)] },
  );
  if (!details.failed || details.counterexample === null || details.counterexample === undefined) return undefined;
  const error = details.errorInstance;
  return {
    property,
    seed,
    path: details.counterexamplePath ?? "0",
    input: (details.counterexample as unknown as [Input])[0],
    violation: error instanceof Error ? error.message : String(error),
    shrinks: details.numShrinks,
  };
}

/** How a shrunk counterexample is reported. */
export function shrunkText<Input, P extends string>(sim: Simulation<Input, P>, s: Shrunk<Input, P>): string {
  return [
    sim.properties[s.property],
    `  reproduce: ${sim.reproduce(s.seed, s.path, s.property)}`,
    `  ${sim.noun} (shrunk ${s.shrinks} times):${sim.text(s.input).replace(/\n/g, "\n  ")}`,
    `  ${s.violation}`,
  ].join("\n");
}

/** What `npm run sim` was asked to scan. */
export interface ScanArgs<P extends string> {
  readonly seeds: number;
  readonly first: number;
  readonly only: P | undefined;
  readonly shrinkSeconds: number;
}

/**
 * Checks the inputs of `seeds` seeds from `first` on, printing progress and rate, then each failing
 * property's first seed, shrunk. Returns the exit code: 0 when nothing failed.
 */
export async function scanSeeds<Input, P extends string>(sim: Simulation<Input, P>, args: ScanArgs<P>): Promise<number> {
  const nouns = `${sim.noun}s`;
  console.log(`checking ${args.seeds} ${nouns}, seeds ${args.first}..${args.first + args.seeds - 1}`);
  const firstSeeds = new Map<P, { seed: number; message: string }>();
  const failingSeeds = new Map<P, number[]>();
  const crashes: Array<{ seed: number; error: unknown }> = [];
  const began = Date.now();
  let lastReport = began;
  let actions = 0;
  for (let i = 0; i < args.seeds; i++) {
    const seed = args.first + i;
    const outcome = await scanSeed(sim, seed);
    if (outcome.crash !== undefined) crashes.push({ seed, error: outcome.crash });
    for (const v of outcome.violations) {
      if (args.only !== undefined && v.property !== args.only) continue;
      failingSeeds.set(v.property, [...(failingSeeds.get(v.property) ?? []), seed]);
      if (!firstSeeds.has(v.property)) firstSeeds.set(v.property, { seed, message: v.message });
    }
    actions += outcome.actions;
    const now = Date.now();
    if (now - lastReport > 5_000 || i === args.seeds - 1) {
      lastReport = now;
      const rate = (i + 1) / ((now - began) / 1000);
      const failing = [...failingSeeds].map(([p, seeds]) => `${p} ${seeds.length}`).join(", ") || "none";
      console.log(
        `${i + 1}/${args.seeds} ${nouns}, ${rate.toFixed(1)}/s (${Math.round(rate * 3600)}/h), ${actions} actions; violations by property: ${failing}`,
      );
    }
  }
  const seconds = (Date.now() - began) / 1000;
  console.log(`\n${args.seeds} ${nouns} in ${seconds.toFixed(1)} s: ${Math.round((args.seeds / seconds) * 3600)} ${nouns}/h`);
  for (const c of crashes)
    console.log(`\nseed ${c.seed}: the harness failed: ${c.error instanceof Error ? c.error.stack : String(c.error)}`);
  for (const [property, { seed, message }] of firstSeeds) {
    const seeds = failingSeeds.get(property) ?? [];
    console.log(`\n${seeds.length} ${nouns} violate "${sim.properties[property]}"; first: seed ${seed}: ${message}`);
    console.log(`  seeds: ${seeds.join(", ")}`);
    if (args.shrinkSeconds <= 0) continue;
    const shrunk = await shrink(sim, seed, property, args.shrinkSeconds * 1000);
    console.log(
      shrunk === undefined ? `  (seed ${seed} did not fail again when checked for this property alone)` : shrunkText(sim, shrunk),
    );
  }
  return firstSeeds.size === 0 && crashes.length === 0 ? 0 : 1;
}

/** Replays the counterexample at `path` of `seed`, printing its input and trace; 0 when it violates nothing. */
export async function replayOne<Input, P extends string>(
  sim: Simulation<Input, P>,
  seed: number,
  path: string,
  only: P | undefined,
): Promise<{ code: number; input: Input; violations: readonly unknown[] }> {
  const { input, report, error } = await replay(sim, seed, path, only);
  console.log(`seed ${seed}, path ${path}:${sim.text(input)}`);
  for (const line of report?.trace ?? (sim.isViolation(error) ? error.trace : [])) console.log(line);
  const violations = error !== undefined ? [error] : (report?.violations ?? []);
  for (const v of violations) console.log(`\n${v instanceof Error ? (v.stack ?? v.message) : String(v)}`);
  return { code: violations.length === 0 ? 0 : 1, input, violations };
}
