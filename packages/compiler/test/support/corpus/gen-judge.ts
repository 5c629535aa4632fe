import { BreakingChangeError, type GenerateResult, SourceError } from "../../../src/index.js";
import { Scenario } from "../scenario.js";
import { type ChangePair, versionFiles } from "./pair.js";

/** What `fusee gen --check` says of a pair, from worst to best. */
export type GenVerdict = "breaking" | "possibly-breaking" | "after-last-wait" | "compatible";

/**
 * Asks `fusee gen` about pairs, as a user would: records version 1 in the lock, then checks
 * version 2 against it. One loaded project serves every pair.
 */
export class GenJudge {
  private readonly scenario: Scenario;

  constructor(first: ChangePair) {
    this.scenario = Scenario.create(prefixed(versionFiles(first.v1)));
  }

  verdict(pair: ChangePair): { verdict: GenVerdict; says: string; unreadable: string[] } {
    const { scenario } = this;
    for (const [path, text] of Object.entries(prefixed(versionFiles(pair.v1)))) scenario.write(path, text);
    scenario.generate({ acceptBreaking: true });
    for (const [path, text] of Object.entries(prefixed(versionFiles(pair.v2)))) scenario.write(path, text);
    let result: GenerateResult;
    try {
      result = scenario.generate({ check: true });
    } catch (e) {
      // A source problem fails the check as surely as a breaking change does.
      if (e instanceof SourceError || e instanceof BreakingChangeError) return { verdict: "breaking", says: e.message, unreadable: [] };
      throw e;
    }
    // The steps whose recorded results the new code cannot read: the journal tier fails runs holding one.
    const unreadable = result.breaking.filter((b) => b.kind === "type-changed").map((b) => b.step);
    const inFlight = result.breaking.filter((b) => b.kind !== "after-last-wait");
    if (inFlight.length > 0) return { verdict: "breaking", says: inFlight.map((b) => b.message).join("\n"), unreadable };
    if (result.possiblyBreaking.length > 0)
      return { verdict: "possibly-breaking", says: result.possiblyBreaking.map((b) => b.message).join("\n"), unreadable };
    if (result.breaking.length > 0)
      return { verdict: "after-last-wait", says: result.breaking.map((b) => b.message).join("\n"), unreadable };
    return { verdict: "compatible", says: "", unreadable };
  }

  remove(): void {
    this.scenario.remove();
  }
}

function prefixed(files: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(files).map(([path, text]) => [`src/${path}`, text]));
}
