import { expect } from "chai";
import { CORPORA } from "./support/corpus/corpora.js";
import { GenJudge } from "./support/corpus/gen-judge.js";
import { RuntimeJudge } from "./support/corpus/judge.js";
import { figures, precision, recall, report, type Row } from "./support/corpus/measure.js";
import { digestOf, readVerdicts, staleVerdicts } from "./support/corpus/verdicts.js";

/**
 * The measure of `fusee gen --check`, on two corpora of before/after pairs: the runtime's verdict on
 * each pair (runs of version 1 left at each wait, continued by version 2), recorded by `npm run
 * corpus:judge`, against gen's. Judging every pair with the runtime takes minutes, so the suite
 * checks that each recorded verdict is of the pair as written, judges a sample of pairs again, and
 * compares gen with the verdicts. `npm run corpus` prints the figures.
 */
describe("the replay-breaking change corpora", function () {
  this.timeout(300_000);
  const rows: Record<string, Row[]> = {};

  before(() => {
    for (const [name, pairs] of Object.entries(CORPORA)) {
      const book = readVerdicts(name);
      if (staleVerdicts(pairs, book).length > 0) continue;
      const gen = new GenJudge(pairs[0] as never);
      try {
        rows[name] = pairs.map((pair) => {
          const { verdict, says, unreadable } = gen.verdict(pair);
          return { pair, runtime: (book[pair.name] as { verdict: Row["runtime"] }).verdict, gen: verdict, says, unreadable };
        });
      } finally {
        gen.remove();
      }
    }
    if (process.env.FUSEE_CORPUS_REPORT !== undefined) console.log(report(rows, true));
  });

  for (const [name, pairs] of Object.entries(CORPORA)) {
    describe(`the ${name} corpus`, () => {
      it("holds the runtime's verdict on every pair as it is written (npm run corpus:judge -- --stale records it)", () => {
        expect(staleVerdicts(pairs, readVerdicts(name))).to.deep.equal([]);
      });

      it("flags every change that breaks runs in flight, and calls few others breaking (recall 100%, precision at least 95%)", () => {
        const f = figures(rows[name] ?? []);
        const text = report({ [name]: rows[name] ?? [] });
        expect(f.pairs, text).to.equal(pairs.length);
        expect(recall(f), text).to.equal(1);
        expect(precision(f), text).to.be.at.least(0.95);
      });

      it("has the journal tier fail exactly the runs left at a wait that the runtime breaks", () => {
        const f = figures(rows[name] ?? []);
        expect(f.journal.runs).to.be.greaterThan(0);
        expect(f.journal.agree, report({ [name]: rows[name] ?? [] })).to.equal(f.journal.runs);
      });

      it("reports a change that breaks only finished runs as its own class", () => {
        const f = figures(rows[name] ?? []);
        expect(f.finishedOnlyRight, report({ [name]: rows[name] ?? [] })).to.equal(f.finishedOnly);
      });
    });
  }

  it("gets the recorded verdict again when the runtime judges a sample of the pairs", async () => {
    // A pair is in the sample when its digest starts with 0 or 1: an eighth of the pairs, which changes as they do.
    const sample = Object.entries(CORPORA).flatMap(([name, pairs]) =>
      pairs.filter((p) => /^[01]/.test(digestOf(p))).map((pair) => ({ name, pair })),
    );
    expect(sample.length).to.be.greaterThan(5);
    const judge = new RuntimeJudge();
    try {
      for (const { name, pair } of sample) {
        const recorded = readVerdicts(name)[pair.name]?.verdict;
        expect(await judge.judge(pair), `${name}: ${pair.name}`).to.deep.equal(recorded);
      }
    } finally {
      judge.remove();
    }
  });
});
