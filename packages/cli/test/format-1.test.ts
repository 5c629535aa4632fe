import { expect } from "chai";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { fusee } from "./support/in-process.js";

// A data directory as fusee wrote it in format 1: run pay-0 finished, pay-1 waiting.
const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "test", "fixtures", "format-1-data");

const formatOf = (dir: string): number => (JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { format: number }).format;

describe("the command line on a data directory of format 1", function () {
  this.timeout(30_000);
  let tmp: string;
  let data: string;
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), "fusee-cli-format-1-"));
    data = join(tmp, "data");
    cpSync(FIXTURE, data, { recursive: true });
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it("lists and describes its runs without moving it to the current format", async () => {
    const listed = await fusee("list", "--data", data);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout)
      .to.match(/pay-0\s+Pay\s+1\s+ok\s/)
      .and.match(/pay-1\s+Pay\s+1\s+running\s/);
    expect((await fusee("describe", "pay-0", "--data", data)).code).to.equal(0);
    expect(formatOf(data)).to.equal(1);
  });

  it("is moved to the current format by fusee repair, which says so on standard error", async () => {
    const r = await fusee("repair", "--data", data);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain("nothing needed cutting");
    expect(r.stderr.trim().split("\n")).to.deep.equal([`fusee repair: moved ${data} from format 1 to format 2`]);
    expect(formatOf(data)).to.equal(2);
    expect((await fusee("list", "--data", data)).stdout).to.match(/pay-0\s+Pay\s+1\s+ok\s/);
  });

  it("reports the move in the JSON of fusee repair", async () => {
    const r = await fusee("repair", "--data", data, "--json");
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.equal({ ok: true, dir: data, cuts: [], migrated: { from: 1, to: 2 } });
  });
});
