import { expect } from "chai";
import { BreakingChangeError, type GenerateResult, SourceError } from "../src/index.js";
import { CASES } from "./support/corpus/cases.js";
import { RuntimeJudge, type Verdict } from "./support/corpus/judge.js";
import { type ChangePair, versionFiles } from "./support/corpus/pair.js";
import { Scenario } from "./support/scenario.js";

/** What `fusee gen --check` says of a pair. */
type GenVerdict = "breaking" | "after-last-wait" | "compatible";

interface Row {
  readonly pair: ChangePair;
  readonly runtime: Verdict;
  readonly gen: GenVerdict;
  readonly says: string;
}

/**
 * The measure of `fusee gen --check`: for each pair of the corpus, the runtime's verdict (runs of
 * version 1 left at each wait, continued by version 2) against gen's. A change that breaks a run in
 * flight must be refused (recall); a refusal must be of such a change (precision); a change that
 * breaks only the replay of finished runs must be reported as that class.
 */
describe("the replay-breaking change corpus", function () {
  this.timeout(600_000);
  let scenario: Scenario;
  let judge: RuntimeJudge;
  const rows: Row[] = [];

  before(() => {
    scenario = Scenario.create(prefixed(versionFiles(CASES[0]?.v1 ?? { body: "return '';" })));
    judge = new RuntimeJudge(scenario.fixture.path("corpus"));
  });

  after(() => {
    scenario.remove();
  });

  function genVerdict(pair: ChangePair): { verdict: GenVerdict; says: string } {
    for (const [path, text] of Object.entries(prefixed(versionFiles(pair.v1)))) scenario.write(path, text);
    scenario.generate({ acceptBreaking: true });
    for (const [path, text] of Object.entries(prefixed(versionFiles(pair.v2)))) scenario.write(path, text);
    let result: GenerateResult;
    try {
      result = scenario.generate({ check: true });
    } catch (e) {
      if (e instanceof SourceError || e instanceof BreakingChangeError) return { verdict: "breaking", says: e.message };
      throw e;
    }
    const finishedOnly = (kind: string) => kind === "after-last-wait";
    const inFlight = result.breaking.filter((b) => !finishedOnly(b.kind));
    if (inFlight.length > 0) return { verdict: "breaking", says: inFlight.map((b) => b.message).join("\n") };
    if (result.breaking.length > 0) return { verdict: "after-last-wait", says: result.breaking.map((b) => b.message).join("\n") };
    return { verdict: "compatible", says: "" };
  }

  it("judges every pair with the runtime and with gen", async () => {
    for (const pair of CASES) {
      const runtime = await judge.judge(pair);
      const { verdict, says } = genVerdict(pair);
      rows.push({ pair, runtime, gen: verdict, says });
    }
    expect(rows.length).to.equal(CASES.length);
  });

  it("has pairs of every kind, breaking and not", () => {
    const kinds = new Set(CASES.map((c) => c.kind));
    for (const kind of ["step", "sleep", "wait", "child", "attributes", "helper", "after-last-wait", "harmless"]) expect(kinds, kind).to.include(kind);
    expect(rows.filter((r) => r.runtime.breaksInFlight).length).to.be.greaterThan(10);
    expect(rows.filter((r) => !r.runtime.breaksInFlight).length).to.be.greaterThan(10);
  });

  it("refuses every change that breaks runs in flight, and few others (recall 100%, precision at least 95%)", () => {
    const breaking = rows.filter((r) => r.runtime.breaksInFlight);
    const caught = breaking.filter((r) => r.gen === "breaking");
    const refused = rows.filter((r) => r.gen === "breaking");
    const right = refused.filter((r) => r.runtime.breaksInFlight);
    const recall = caught.length / breaking.length;
    const precision = refused.length === 0 ? 1 : right.length / refused.length;
    const lines = [
      `corpus: ${rows.length} pairs, ${breaking.length} break runs in flight, ${rows.filter((r) => !r.runtime.breaksInFlight && r.runtime.breaksFinished).length} break finished runs only`,
      `recall ${caught.length}/${breaking.length} = ${(recall * 100).toFixed(1)}%, precision ${right.length}/${refused.length} = ${(precision * 100).toFixed(1)}%`,
      ...breaking.filter((r) => r.gen !== "breaking").map((r) => `  missed: ${r.pair.name} (${r.runtime.detail ?? ""})`),
      ...refused.filter((r) => !r.runtime.breaksInFlight).map((r) => `  false alarm: ${r.pair.name}: ${r.says.split("\n")[0] ?? ""}`),
    ];
    if (process.env.FUSEE_CORPUS_REPORT !== undefined) {
      for (const r of rows) lines.push(`  ${r.pair.kind.padEnd(16)} ${r.pair.name.padEnd(56)} runtime: ${r.runtime.breaksInFlight ? "breaks" : r.runtime.breaksFinished ? "finished only" : "ok"}; gen: ${r.gen}`);
    }
    console.log(lines.join("\n"));
    expect(recall, lines.join("\n")).to.equal(1);
    expect(precision, lines.join("\n")).to.be.at.least(0.95);
  });

  it("reports a change that breaks only finished runs as its own class", () => {
    const finishedOnly = rows.filter((r) => !r.runtime.breaksInFlight && r.runtime.breaksFinished);
    const wrong = finishedOnly.filter((r) => r.gen !== "after-last-wait").map((r) => `${r.pair.name}: gen says ${r.gen}`);
    expect(finishedOnly.length).to.be.greaterThan(2);
    expect(wrong).to.deep.equal([]);
  });
});

function prefixed(files: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(files).map(([path, text]) => [`src/${path}`, text]));
}
