import { expect } from "chai";
import { execFile } from "node:child_process";
import { BENCHMARKS, benchMain } from "../src/commands/bench.js";
import { fusee } from "./support/in-process.js";

describe("fusee bench", () => {
  it("lists the benchmarks and exits 2 without a name", async () => {
    const r = await fusee("bench");
    expect(r.code).to.equal(2);
    expect(r.stderr).to.contain("usage: fusee bench <name>");
    for (const name of Object.keys(BENCHMARKS)) expect(r.stderr).to.match(new RegExp(`^  ${name}\\s+\\S`, "m"));
  });

  it("exits 2 on an unknown benchmark, naming the valid ones", async () => {
    const r = await fusee("bench", "nope");
    expect(r.code).to.equal(2);
    expect(r.stderr).to.contain("'nope'").and.contain(Object.keys(BENCHMARKS).join(", "));
    const json = await fusee("bench", "nope", "--json");
    expect(json.code).to.equal(2);
    expect(JSON.parse(json.stdout)).to.deep.include({ ok: false });
  });

  it("knows the same benchmarks as the runtime's bench entry point", async () => {
    // Without a name the entry point prints its usage, listing its benchmarks, and runs none.
    const usage = await new Promise<string>((resolve) =>
      execFile(process.execPath, [benchMain()], (_error, _stdout, stderr) => resolve(stderr)),
    );
    const names = /<([^>]+)>/.exec(usage)?.[1]?.split("|") ?? [];
    expect(names.sort()).to.deep.equal(Object.keys(BENCHMARKS).sort());
  });
});
