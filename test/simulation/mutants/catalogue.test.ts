import { expect } from "chai";
import { existsSync } from "node:fs";
import { WORKSPACE } from "../../support/workspace.js";
import { MUTANTS } from "./catalogue.js";
import { fileOf, occurrences, patched, sourceOf } from "./mutant.js";

describe("the mutants of `npm run sim:mutants`", () => {
  it("are at least fifteen, with names of their own", () => {
    const names = MUTANTS.map((m) => m.name);
    expect(names.length).to.be.at.least(15);
    expect(new Set(names).size, "distinct names").to.equal(names.length);
  });

  for (const m of MUTANTS) {
    it(`${m.name}: its search text occurs exactly once in ${m.file}, and the patch changes the file`, () => {
      expect(existsSync(fileOf(WORKSPACE, m)), `${m.file} exists`).to.equal(true);
      const text = sourceOf(WORKSPACE, m);
      expect(occurrences(text, m.search)).to.equal(1);
      expect(patched(text, m)).to.not.equal(text);
    });
  }
});
