/**
 * Measures `fusee gen` on a generated project of many workflows: a cold `generate()` (load, analyze,
 * emit, write) and the watcher's regeneration after one file changes, from the write to the result.
 *
 *   node packages/compiler/dist/bench/gen-bench.js [--workflows 200] [--rounds 5] [--json]
 */
import { performance } from "node:perf_hooks";
import { generate, type GenerateResult, watch } from "../src/index.js";
import { Fixture } from "../test/support/fixture.js";

interface Figures {
  workflows: number;
  generateMs: { min: number; median: number; max: number };
  watchMs: { min: number; median: number; max: number };
  targets: { generateMs: number; watchMs: number };
  ok: boolean;
}

const GENERATE_TARGET_MS = 5000;
const WATCH_TARGET_MS = 500;

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const value = i < 0 ? undefined : Number(process.argv[i + 1]);
  return value === undefined || !Number.isFinite(value) ? fallback : value;
}

function workflowSource(i: number, extraStep = 0): string {
  return `import { Workflow, Step, Signal, Query, Update, Ctx } from "@fusee/runtime";
import { Address, Money } from "../models.js";

@Workflow({ patches: ["audit-${i}"${extraStep > 0 ? `, "extra-${extraStep}"` : ""}] })
export class Flow${i} {
  private total = 0;
  private approved = false;

  constructor(private readonly ctx: Ctx) {}

  async run(input: { id: string; cents: number }): Promise<Money> {
    const quote = await this.quote(input.cents);
    if (this.ctx.patched("audit-${i}")) await this.audit(quote);
    for (let k = 0; k < 3; k++) await this.charge(new Money(quote, "EUR"));
    const address = await this.ctx.step("address", async () => new Address("Main St ${i}"));
    await this.ship(address);${extraStep > 0 ? `\n    if (this.ctx.patched("extra-${extraStep}")) await this.ctx.step("extra-${extraStep}", async () => ${extraStep});` : ""}
    await this.ctx.condition(() => this.approved);
    return new Money(this.total, "EUR");
  }

  @Step() async quote(cents: number): Promise<number> { return cents; }
  @Step() async audit(cents: number): Promise<void> { void cents; }
  @Step() async charge(money: Money): Promise<Money> { this.total += money.cents; return money; }
  @Step() async ship(address: Address): Promise<string> { return address.street; }
  @Signal() approve(ok: boolean): void { this.approved = ok; }
  @Query() sum(): number { return this.total; }
  @Update() async add(cents: number): Promise<Money> { return this.charge(new Money(cents, "EUR")); }
}
`;
}

const MODELS = `export class Money {
  constructor(public cents: number, public currency: string) {}
}

export class Address {
  constructor(public street: string) {}
}
`;

function stats(samples: readonly number[]): { min: number; median: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    min: round(sorted[0] ?? 0),
    median: round(sorted[Math.floor(sorted.length / 2)] ?? 0),
    max: round(sorted[sorted.length - 1] ?? 0),
  };
}

async function main(): Promise<void> {
  const count = flag("--workflows", 200);
  const rounds = flag("--rounds", 5);
  const json = process.argv.includes("--json");
  const files: Record<string, string> = { "src/models.ts": MODELS };
  for (let i = 0; i < count; i++) files[`src/workflows/flow-${i}.ts`] = workflowSource(i);
  const fixture = Fixture.create(files);
  try {
    const generateSamples: number[] = [];
    for (let r = 0; r < Math.max(1, Math.min(rounds, 3)); r++) {
      const started = performance.now();
      const result = await generate({ project: fixture.dir, acceptBreaking: true });
      generateSamples.push(performance.now() - started);
      if (result.workflows.length !== count) throw new Error(`expected ${count} workflows, found ${result.workflows.length}`);
    }

    const watchSamples: number[] = [];
    let waiting: { resolve(r: GenerateResult): void; reject(e: unknown): void } | undefined;
    const watcher = await watch({ project: fixture.dir }, { onResult: (r) => waiting?.resolve(r), onError: (e) => waiting?.reject(e) });
    try {
      for (let r = 1; r <= rounds; r++) {
        const done = new Promise<GenerateResult>((resolve, reject) => (waiting = { resolve, reject }));
        const started = performance.now();
        fixture.write(`src/workflows/flow-${r % count}.ts`, workflowSource(r % count, r));
        await done;
        watchSamples.push(performance.now() - started);
      }
    } finally {
      await watcher.close();
    }

    const figures: Figures = {
      workflows: count,
      generateMs: stats(generateSamples),
      watchMs: stats(watchSamples),
      targets: { generateMs: GENERATE_TARGET_MS, watchMs: WATCH_TARGET_MS },
      ok: stats(generateSamples).median < GENERATE_TARGET_MS && stats(watchSamples).median < WATCH_TARGET_MS,
    };
    if (json) {
      process.stdout.write(`${JSON.stringify(figures)}\n`);
      return;
    }
    const row = (name: string, s: { min: number; median: number; max: number }, target: number) =>
      `${name.padEnd(28)}${String(s.min).padStart(9)}${String(s.median).padStart(9)}${String(s.max).padStart(9)}${`< ${target}`.padStart(10)}`;
    process.stdout.write(
      [
        `fusee gen, ${count} workflows`,
        `${"".padEnd(28)}${"min ms".padStart(9)}${"median".padStart(9)}${"max".padStart(9)}${"target".padStart(10)}`,
        row(`generate (cold, ${generateSamples.length}x)`, figures.generateMs, GENERATE_TARGET_MS),
        row(`watch, one file (${watchSamples.length}x)`, figures.watchMs, WATCH_TARGET_MS),
        figures.ok ? "within targets" : "OUTSIDE TARGETS",
        "",
      ].join("\n"),
    );
  } finally {
    fixture.remove();
  }
}

await main();
