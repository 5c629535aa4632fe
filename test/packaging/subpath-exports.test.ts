import "reflect-metadata";
import { relative } from "node:path";
import { expect } from "chai";
import { build } from "esbuild";
import * as root from "@fusee/runtime";
import * as calls from "@fusee/runtime/calls";
import * as client from "@fusee/runtime/client";
import * as replay from "@fusee/runtime/replay";
import * as testing from "@fusee/runtime/testing";
import * as workflow from "@fusee/runtime/workflow";
import { WORKSPACE } from "../support/workspace.js";

describe("@fusee/runtime's entry points", () => {
  it("give workflow code its authoring surface from /workflow, without the engine", () => {
    for (const name of [
      "Workflow",
      "Step",
      "Signal",
      "Query",
      "Update",
      "Ctx",
      "RetryPolicy",
      "registerWorkflow",
      "registerStep",
      "registerType",
      "CancelledError",
      "toMillis",
    ]) {
      expect(workflow, name).to.have.property(name);
    }
    expect(workflow).to.not.have.property("Engine");
  });

  it("give callers run handles and errors from /client, without workflow internals", () => {
    for (const name of ["RunHandle", "NotFoundError", "RejectedError", "FuseeError"]) expect(client, name).to.have.property(name);
    expect(client).to.not.have.property("Workflow");
  });

  it("give tools export and replay from /replay, and tests the test engine from /testing", () => {
    for (const name of ["Replayer", "exportJournal", "exportFromDir", "DataDirReader", "readExport", "writeExport"])
      expect(replay, name).to.have.property(name);
    for (const name of ["TestEngine", "VirtualClock", "Replayer"]) expect(testing, name).to.have.property(name);
  });

  it("keep every name of the public API at the root, the same objects as in the subpaths", () => {
    for (const name of [
      "Engine",
      "Config",
      "Schedule",
      "Debounce",
      "Batch",
      "aesGcm",
      "repairDataDir",
      "Workflow",
      "Ctx",
      "RunHandle",
      "Replayer",
    ]) {
      expect(root, name).to.have.property(name);
    }
    expect(root.Ctx).to.equal(workflow.Ctx);
    expect(root.RunHandle).to.equal(client.RunHandle);
    expect(root.CancelledError).to.equal(workflow.CancelledError);
  });

  it("give tools the table of workflow API calls from /calls, which loads no other module of the runtime", async () => {
    expect(calls.WORKFLOW_CALLS.step.journals).to.equal("step");
    expect(calls.messageStepName("signal")).to.equal("ctx.signalWorkflow");
    const bundle = await build({
      stdin: { contents: 'import "@fusee/runtime/calls";', resolveDir: WORKSPACE },
      bundle: true,
      write: false,
      metafile: true,
      platform: "node",
      format: "esm",
      logLevel: "silent",
    });
    const inputs = Object.keys(bundle.metafile.inputs)
      .filter((f) => f !== "<stdin>")
      .map((f) => relative(WORKSPACE, f));
    expect(inputs).to.have.length(1);
    expect(inputs[0]).to.match(/call-table\.js$/);
  });
});
