import { expect } from "chai";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RECORD_KINDS } from "../../src/journal/record-kinds.js";

// From packages/runtime/dist/test/replay to packages/runtime/docs.
const DOC = fileURLToPath(new URL("../../../docs/export-format.md", import.meta.url));

describe("the export format's document", () => {
  it("has a row for every record kind an export can hold", () => {
    const rows = [...readFileSync(DOC, "utf8").matchAll(/^\| `([a-z-]+)`\s+\|/gm)].map((m) => m[1]);
    expect(Object.keys(RECORD_KINDS).filter((kind) => !rows.includes(kind))).to.deep.equal([]);
  });
});
