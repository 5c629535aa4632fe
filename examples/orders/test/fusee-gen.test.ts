import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { generate } from "@fusee/compiler";

const PROJECT = fileURLToPath(new URL("../..", import.meta.url));

describe("fusee gen", () => {
  it("finds the generated clients, the worker type table and the lock current with the workflow's code", async function () {
    this.timeout(60_000);
    const result = await generate({ project: PROJECT, check: true });
    expect(
      result.files.filter((f) => f.status === "stale").map((f) => f.path),
      "stale files",
    ).to.deep.equal([]);
    expect(result.breaking).to.deep.equal([]);
    expect(result.workflows.map((w) => w.type)).to.deep.equal(["Fulfilment"]);
  });
});
