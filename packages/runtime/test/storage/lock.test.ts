import path from "node:path";
import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { type LocalLog, openLocalLog } from "../../src/storage/index.js";
import { type Child, killHard, startChild } from "./support/child.js";
import { useTempDir } from "./support/temp-dir.js";

const HOLDER = new URL("./fixtures/lock-holder.js", import.meta.url);

describe("the data directory lock", function () {
  this.timeout(30_000);
  const tmp = useTempDir("lock");
  const dir = (): string => path.join(tmp(), "data");
  let holder: Child | undefined;
  afterEach(async () => {
    if (holder !== undefined) await killHard(holder);
    holder = undefined;
  });

  it("lets exactly one of two concurrent opens write, and names the holder's PID to the other", async () => {
    const results = await Promise.allSettled([openLocalLog({ dir: dir(), shards: 1 }), openLocalLog({ dir: dir(), shards: 1 })]);
    const won = results.filter((r): r is PromiseFulfilledResult<LocalLog> => r.status === "fulfilled");
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(won).to.have.length(1);
    expect(lost).to.have.length(1);
    expect(lost[0]!.reason).to.be.instanceOf(StorageError);
    expect((lost[0]!.reason as Error).message)
      .to.contain(`process ${process.pid}`)
      .and.contain(dir());
    await won[0]!.value.close();
    await (await openLocalLog({ dir: dir() })).close();
  });

  it("refuses a second writer while another process holds the directory, naming its PID", async () => {
    holder = startChild(HOLDER, [dir()]);
    await holder.ready;
    const err = await openLocalLog({ dir: dir() }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(StorageError);
    expect((err as Error).message).to.contain(`process ${holder.pid}`);
    // The advice names what a user can run to read beside the writer.
    expect((err as Error).message)
      .to.contain("fusee list")
      .and.contain("exportFromDir");
    expect((err as Error).message).to.not.contain("readOnly");
  });

  it("opens again right after the holder was killed with SIGKILL", async () => {
    holder = startChild(HOLDER, [dir()]);
    await holder.ready;
    await killHard(holder);
    holder = undefined;
    const log = await openLocalLog({ dir: dir() });
    expect((await log.read(0, "held")).length).to.equal(5);
    await log.close();
  });

  it("lets a read-only open read beside a writer process", async () => {
    holder = startChild(HOLDER, [dir()]);
    await holder.ready;
    const reader = await openLocalLog({ dir: dir(), readOnly: true });
    const bodies = (await reader.read(0, "held")).map((e) => Buffer.from(e.body).toString());
    expect(bodies).to.deep.equal(["r0", "r1", "r2", "r3", "r4"]);
    await reader.close();
  });
});
