import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { EXIT_CODES } from "../src/exit-codes.js";
import { fusee } from "./support/in-process.js";
import { WORKSPACE } from "./support/project.js";

/** The exit codes a help text lists after "Exit codes:", one `  N  meaning` per line. */
function fromHelp(text: string): [number, string][] {
  const after = text.slice(text.indexOf("Exit codes:"));
  return [...after.matchAll(/^ {2}(\d+) {2}(.+)$/gm)].map((m) => [Number(m[1]), (m[2] ?? "").trim()]);
}

/** The rows of the markdown table under a heading, as `| code | meaning |`. */
function fromTable(file: string, heading: string): [number, string][] {
  const text = readFileSync(join(WORKSPACE, file), "utf8");
  const start = text.indexOf(heading);
  expect(start, `${file} has a section "${heading}"`).to.be.at.least(0);
  const rows: [number, string][] = [];
  for (const line of text.slice(start).split("\n").slice(1)) {
    const m = /^\|\s*(\d+)\s*\|\s*(.+?)\s*\|$/.exec(line);
    if (m !== null) rows.push([Number(m[1]), (m[2] ?? "").replace(/`/g, "")]);
    else if (rows.length > 0 && !line.startsWith("|")) break;
  }
  return rows;
}

describe("exit codes", () => {
  const expected = EXIT_CODES.map((e): [number, string] => [e.code, e.meaning]);

  it("are listed by fusee --help, one per code", async () => {
    const r = await fusee("--help");
    expect(fromHelp(r.stdout)).to.deep.equal(expected);
  });

  it("are listed by fusee gen --help, all but the one gen never ends with", async () => {
    const r = await fusee("gen", "--help");
    expect(fromHelp(r.stdout)).to.deep.equal(expected.filter(([code]) => code !== 1));
  });

  it("say the same in the README of the command line as in fusee --help", () => {
    expect(fromTable("packages/cli/README.md", "## Exit codes")).to.deep.equal(expected);
  });

  it("say the same in the versioning guide as in fusee --help", () => {
    expect(fromTable("docs/versioning.md", "| code | meaning")).to.deep.equal(expected);
  });
});
