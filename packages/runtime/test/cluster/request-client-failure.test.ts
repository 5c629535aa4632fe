import { expect } from "chai";
import { StorageError } from "../../src/core/errors.js";
import { RequestClient } from "../../src/engine/cluster/request-client.js";
import type { RequestTable } from "../../src/storage/postgres/index.js";

const lost = (): Error => new Error("terminating connection due to administrator command");

/** Why a request to the owner of `shard` failed, through a table whose statements fail as `table` says. */
async function failureOf(table: Partial<RequestTable>, shard: number): Promise<unknown> {
  const client = new RequestClient(table as RequestTable, "asker");
  try {
    await client.request(shard, "status", Buffer.from([]), 1_000);
    return "answered";
  } catch (e) {
    return e;
  } finally {
    client.close();
  }
}

describe("a forwarded request whose own database statements fail (this process's session terminated)", () => {
  // The engine stops for a storage failure of a shard it holds; this one is of the shard the request
  // went to, which another process holds: the caller may ask again, and the engine goes on.
  it("fails with a StorageError naming the shard it was sent to, when its insert fails and the request was not stored", async () => {
    const e = await failureOf({ ask: () => Promise.reject(lost()), stored: () => Promise.resolve(false) }, 3);
    expect(e).to.be.instanceOf(StorageError);
    expect((e as StorageError).shard).to.equal(3);
  });

  it("fails with a StorageError naming the shard it was sent to, when taking its reply keeps failing", async () => {
    const e = await failureOf({ ask: () => Promise.resolve(), take: () => Promise.reject(lost()) }, 5);
    expect(e).to.be.instanceOf(StorageError);
    expect((e as StorageError).shard).to.equal(5);
  });

  // A request stored is performed by the shard's owner whatever happens to the asking session: the
  // caller must get its answer, not an error that reads as if nothing was done.
  const reply = { outcome: "ok" as const, payload: Buffer.from([]) };

  it("waits for its answer when its insert failed though the request was stored (the commit landed before the session ended)", async () => {
    let asked = "";
    const e = await failureOf(
      {
        ask: (requests) => {
          asked = requests[0]!.id;
          return Promise.reject(lost());
        },
        stored: (id) => Promise.resolve(id === asked),
        take: (ids) => Promise.resolve(new Map(ids.map((id) => [id, reply]))),
      },
      3,
    );
    expect(e).to.equal("answered");
  });

  it("takes its answer when one take of the replies fails and the next succeeds", async () => {
    let takes = 0;
    const e = await failureOf(
      {
        ask: () => Promise.resolve(),
        take: (ids) => (takes++ === 0 ? Promise.reject(lost()) : Promise.resolve(new Map(ids.map((id) => [id, reply])))),
      },
      5,
    );
    expect(e).to.equal("answered");
  });
});
