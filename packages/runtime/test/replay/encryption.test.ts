import "reflect-metadata";
import { expect } from "chai";
import { aesGcm } from "../../src/codec/aes-gcm.js";
import { CodecError, RejectedError } from "../../src/core/errors.js";
import { readRecordPayload } from "../../src/journal/record-codec.js";
import type { Engine } from "../../src/engine/engine.js";
import { exportFromDir } from "../../src/replay/export-from-dir.js";
import { Replayer } from "../../src/replay/replayer.js";
import { openLocalLog } from "../../src/storage/local-log.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Signal, Step, Update, Workflow } from "../../src/workflow/decorators.js";
import { RetryPolicy } from "../../src/workflow/retry-policy.js";
import { eventually, leaks, openLocal, tempDir, walk } from "./helpers.js";

const k1 = Buffer.alloc(32, 3);
const k2 = Buffer.alloc(32, 9);

/** Every secret the suite writes; none may appear in any file of the data directory. */
const SECRETS = [
  "SECRETCARD",
  "SECRETRESULT",
  "SECRETSTEPERROR",
  "SECRETSIGNAL",
  "SECRETHANDLED",
  "SECRETUPDATEARG",
  "SECRETUPDATERESULT",
  "SECRETUPDATEERROR",
  "SECRETSTARTUPDATE",
  "SECRETATTRKEY",
  "SECRETATTRVALUE",
  "SECRETPROGRESS",
  "SECRETCOMPLETION",
  "SECRETCHILDINPUT",
  "SECRETCHILDRESULT",
  "SECRETFAILURE",
  "SECRETTERMINATE",
];

const tokens: string[] = [];

@Workflow()
class SecretChild {
  async run(input: string): Promise<string> {
    return `${input.slice(0, 3)}-SECRETCHILDRESULT`;
  }
}

@Workflow()
class Secret {
  private handled = "";
  private items: string[] = [];

  constructor(private readonly ctx: Ctx) {}

  async run(card: string): Promise<string> {
    const masked = await this.mask(card);
    let stepError = "";
    try {
      await this.reject(card);
    } catch (e) {
      stepError = (e as Error).message;
    }
    this.ctx.setAttributes({ SECRETATTRKEY: "SECRETATTRVALUE" });
    await this.ctx.step("tracked", async () => {
      this.ctx.heartbeat({ note: "SECRETPROGRESS" });
      return 1;
    });
    const note = await this.ctx.waitFor<string>("note");
    await this.ctx.condition(() => this.handled !== "");
    const completion = await this.ctx.awaitCompletion<string>("approval", ({ token }) => {
      tokens.push(token);
    });
    const child = await this.ctx.executeChild(SecretChild, `${this.ctx.workflowId}-child`, "SECRETCHILDINPUT");
    return [masked, stepError.length, note, this.handled.length, completion.length, child.length, this.items.length].join("/");
  }

  @Step() async mask(card: string): Promise<string> {
    return `${card.slice(0, 4)}-SECRETRESULT`;
  }

  @Step({ retry: RetryPolicy.none() }) async reject(card: string): Promise<never> {
    throw new TypeError(`card ${card.slice(4)} failed: SECRETSTEPERROR`);
  }

  @Signal() handle(value: string): void {
    this.handled = value;
  }

  @Update() async add(item: string): Promise<string> {
    if (item.startsWith("bad")) throw new RangeError("SECRETUPDATEERROR");
    this.items.push(item);
    return "SECRETUPDATERESULT";
  }
}

@Workflow()
class Boom {
  async run(input: string): Promise<never> {
    throw new Error(`${input}: SECRETFAILURE`);
  }
}

@Workflow()
class Idle {
  constructor(private readonly ctx: Ctx) {}
  async run(input: string): Promise<string> {
    await this.ctx.waitFor("never");
    return input;
  }
  @Update() async add(item: string): Promise<number> {
    return item.length;
  }
}

describe("encrypted payloads", () => {
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine | undefined;
  beforeEach(() => {
    tmp = tempDir("codec");
    tokens.length = 0;
  });
  afterEach(async () => {
    await engine?.shutdown();
    engine = undefined;
    tmp.cleanup();
  });

  const workflows = [Secret, SecretChild, Boom, Idle];

  /** Writes a secret through every path that carries user data, with the key(s) given. */
  async function writeSecrets(keys: Record<string, Uint8Array>): Promise<void> {
    engine = await openLocal(tmp.dir, { workflows }, (c) => c.codec(aesGcm(keys)));
    const run = await engine.start(Secret, "s-1", "4242SECRETCARD");
    expect(await run.update<string>("add", "SECRETUPDATEARG")).to.equal("SECRETUPDATERESULT");
    expect(await run.update("add", "bad-one").catch((e: unknown) => e)).to.be.instanceOf(RangeError);
    await run.signal("note", "SECRETSIGNAL");
    await run.signal("handle", "SECRETHANDLED");
    await eventually("the completion token", () => tokens.length === 1);
    await engine.complete(tokens[0]!, "SECRETCOMPLETION");
    expect(await run.result()).to.equal("4242-SECRETRESULT/39/SECRETSIGNAL/13/16/21/1");

    const failed = await engine.start(Boom, "b-1", "input");
    expect(((await failed.result().catch((e: unknown) => e)) as Error).message).to.contain("SECRETFAILURE");
    const { result } = await engine.updateWithStart<string, number>(Idle, "i-1", "idle", "add", "SECRETSTARTUPDATE");
    expect(result).to.equal(17);
    await engine.run("i-1").terminate("SECRETTERMINATE");
    await engine.shutdown();
    engine = undefined;
  }

  it("never writes a payload in the clear: inputs, results, errors, signals, updates, attributes, progress, completions, children", async () => {
    await writeSecrets({ k1 });
    expect(walk(tmp.dir).length).to.be.greaterThan(2);
    expect(leaks(tmp.dir, SECRETS)).to.deep.equal([]);
  });

  it("reads everything back with the same key", async () => {
    await writeSecrets({ k1 });
    engine = await openLocal(tmp.dir, { workflows }, (c) => c.codec(aesGcm({ k1 })));
    expect(await engine.run("s-1").result()).to.equal("4242-SECRETRESULT/39/SECRETSIGNAL/13/16/21/1");
    const detail = await engine.describe("s-1");
    const step = detail?.journal.find((r) => r.kind === "step" && r.name === "reject");
    expect(step?.kind === "step" && step.error).to.be.instanceOf(TypeError);
    expect(step?.kind === "step" && step.error?.stack).to.contain("SECRETSTEPERROR");
    expect(await engine.listWhere({ SECRETATTRKEY: "SECRETATTRVALUE" })).to.have.length(1);
    expect(((await engine.run("b-1").result().catch((e: unknown) => e)) as Error).message).to.contain("SECRETFAILURE");
  });

  it("rotates keys: a run written under k1 reads with { k2, k1 }, and new payloads use k2", async () => {
    await writeSecrets({ k1 });
    const rotated = aesGcm({ k2, k1 });
    engine = await openLocal(tmp.dir, { workflows }, (c) => c.codec(rotated));
    expect(await engine.run("s-1").result()).to.equal("4242-SECRETRESULT/39/SECRETSIGNAL/13/16/21/1");
    const idle = await engine.start(Idle, "i-2", "SECRETCARD");
    expect(await idle.update<number>("add", "four")).to.equal(4);
    await engine.shutdown();
    engine = undefined;
    expect(leaks(tmp.dir, SECRETS)).to.deep.equal([]);

    const keyIds = await keyIdsByStream(rotated);
    expect(new Set(keyIds.get("s-1#1"))).to.deep.equal(new Set(["k1"]));
    expect(new Set(keyIds.get("i-2#1"))).to.deep.equal(new Set(["k2"]));
    expect(rotated.sealedCount("k2")).to.be.greaterThan(0);
    expect(rotated.sealedCount("k1")).to.equal(0);

    engine = await openLocal(tmp.dir, { workflows }, (c) => c.codec(aesGcm({ k2, k1 })));
    expect(await engine.run("i-2").update("add", "again", {})).to.equal(5);
  });

  /** Writes runs without search attributes, so an engine opens without decoding any payload. */
  async function writePlainRuns(keys: Record<string, Uint8Array>): Promise<void> {
    engine = await openLocal(tmp.dir, { workflows }, (c) => c.codec(aesGcm(keys)));
    await (await engine.start(SecretChild, "c-1", "SECRETCHILDINPUT")).result();
    await engine.shutdown();
    engine = undefined;
  }

  /** Opens the directory with `codec` and asks for the result of `id`: what fails, and how. */
  async function resultWith(codec: ReturnType<typeof aesGcm> | undefined, id: string): Promise<unknown> {
    try {
      engine = await openLocal(tmp.dir, { workflows }, (c) => (codec === undefined ? c : c.codec(codec)));
      return await engine.run(id).result();
    } catch (e) {
      return e;
    }
  }

  it("fails with a CodecError naming the key when the key is wrong", async () => {
    await writePlainRuns({ k1 });
    const err = await resultWith(aesGcm({ k1: k2 }), "c-1");
    expect(err).to.be.instanceOf(CodecError);
    expect((err as Error).message).to.contain('"k1"').and.contain("key is wrong");
  });

  it("refuses to open with a CodecError naming the keys when the engine lacks the directory's key", async () => {
    await writePlainRuns({ k1 });
    const err = await resultWith(aesGcm({ k2 }), "c-1");
    expect(err).to.be.instanceOf(CodecError);
    expect((err as Error).message).to.contain('"k1"').and.contain('"k2"').and.contain(tmp.dir);
  });

  it("refuses to open with a CodecError naming the keys when the engine has no codec at all", async () => {
    await writePlainRuns({ k1 });
    const err = await resultWith(undefined, "c-1");
    expect(err).to.be.instanceOf(CodecError);
    expect((err as Error).message).to.contain('"k1"').and.contain("encrypted").and.contain(tmp.dir);
  });

  it("refuses to open with a wrong key when search attributes cannot be read, naming the key", async () => {
    await writeSecrets({ k1 });
    const err = await resultWith(aesGcm({ k1: k2 }), "s-1");
    expect(err).to.be.instanceOf(CodecError);
    expect((err as Error).message).to.contain('"k1"');
  });

  it("exports and replays an encrypted directory with its cipher, and names the key without it", async () => {
    await writeSecrets({ k1 });
    const [journal] = await exportFromDir(tmp.dir, { id: "s-1", cipher: aesGcm({ k1 }) });
    expect(JSON.stringify(journal)).to.contain("SECRETCARD");
    const r = await new Replayer().register(...workflows).replay(journal!);
    expect(r).to.include({ ok: true, finished: true });

    const err = await exportFromDir(tmp.dir, { id: "s-1" }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(CodecError);
    expect((err as Error).message).to.contain("s-1").and.contain('"k1"').and.contain("cipher");
    const wrong = await exportFromDir(tmp.dir, { id: "s-1", cipher: aesGcm({ k2 }) }).catch((e: unknown) => e);
    expect(wrong).to.be.instanceOf(CodecError);
    expect((wrong as Error).message).to.contain('"k1"');
  });

  it("refuses to journal a value the codec cannot encode, before anything is sealed", async () => {
    engine = await openLocal(tmp.dir, { workflows }, (c) => c.codec(aesGcm({ k1 })));
    const err = await engine.start(Idle, "bad", (() => 1) as unknown as string).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(CodecError);
    expect(err).to.not.be.instanceOf(RejectedError);
  });

  /** The key ID of every sealed payload on disk, per log stream. */
  async function keyIdsByStream(cipher: ReturnType<typeof aesGcm>): Promise<Map<string, string[]>> {
    const log = await openLocalLog({ dir: tmp.dir, readOnly: true });
    const out = new Map<string, string[]>();
    try {
      for (let shard = 0; shard < log.shardCount; shard++) {
        for await (const entry of log.scan(shard)) {
          const payload = readRecordPayload(entry.body);
          if (payload.length === 0) continue;
          out.set(entry.stream, [...(out.get(entry.stream) ?? []), cipher.keyIdOf(payload)]);
        }
      }
    } finally {
      await log.close();
    }
    return out;
  }
});
