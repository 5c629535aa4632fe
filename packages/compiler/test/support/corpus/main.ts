import { CORPORA } from "./corpora.js";
import { GenJudge } from "./gen-judge.js";
import { RuntimeJudge } from "./judge.js";
import { report, type Row } from "./measure.js";
import { digestOf, readVerdicts, staleVerdicts, writeVerdicts } from "./verdicts.js";

/**
 * The corpora's figures, from the command line:
 *
 *   npm run corpus                     gen's verdicts against the recorded runtime verdicts, as a table
 *   npm run corpus -- --pairs          ... and one line per pair
 *   npm run corpus:judge               judges every pair with the runtime again and records the verdicts
 *   npm run corpus:judge -- --stale    ... only the pairs whose recorded verdict is missing or stale
 *
 * `--corpus NAME` limits either to one corpus.
 */
async function main(args: readonly string[]): Promise<number> {
  const only = args.includes("--corpus") ? args[args.indexOf("--corpus") + 1] : undefined;
  const names = Object.keys(CORPORA).filter((n) => only === undefined || n === only);
  if (names.length === 0) {
    process.stderr.write(`no corpus is called ${only ?? ""}; there are ${Object.keys(CORPORA).join(", ")}\n`);
    return 2;
  }
  if (args.includes("--judge")) {
    const judge = new RuntimeJudge();
    try {
      for (const name of names) {
        const pairs = CORPORA[name] ?? [];
        const book = { ...readVerdicts(name) };
        const todo = args.includes("--stale") ? new Set(staleVerdicts(pairs, book)) : new Set(pairs.map((p) => p.name));
        let done = 0;
        for (const pair of pairs) {
          if (!todo.has(pair.name)) continue;
          const started = Date.now();
          book[pair.name] = { digest: digestOf(pair), verdict: await judge.judge(pair) };
          process.stderr.write(`${name}: ${++done}/${todo.size} ${pair.name} (${Date.now() - started} ms)\n`);
        }
        const known = new Set(pairs.map((p) => p.name));
        writeVerdicts(name, Object.fromEntries(Object.entries(book).filter(([n]) => known.has(n))));
      }
    } finally {
      judge.remove();
    }
  }
  const corpora: Record<string, Row[]> = {};
  for (const name of names) {
    const pairs = CORPORA[name] ?? [];
    const book = readVerdicts(name);
    const stale = staleVerdicts(pairs, book);
    if (stale.length > 0) {
      process.stderr.write(`corpus ${name}: no current runtime verdict for ${stale.join("; ")}. Run: npm run corpus:judge -- --stale\n`);
      return 1;
    }
    const gen = new GenJudge(pairs[0] as never);
    try {
      corpora[name] = pairs.map((pair) => {
        const { verdict, says, unreadable } = gen.verdict(pair);
        return { pair, runtime: (book[pair.name] as { verdict: Row["runtime"] }).verdict, gen: verdict, says, unreadable };
      });
    } finally {
      gen.remove();
    }
  }
  process.stdout.write(`${report(corpora, args.includes("--pairs"))}\n`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
