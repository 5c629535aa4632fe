import "reflect-metadata";
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { aesGcm, RANDOM_NONCE_LIMIT } from "../../src/codec/index.js";
import { CodecError } from "../../src/core/errors.js";
import { Config } from "../../src/engine/config.js";
import { Engine } from "../../src/engine/engine.js";
import { SEAL_RESERVATION, SEAL_WARNING_CODE, SealBudget } from "../../src/engine/seal-budget.js";
import type { Log } from "../../src/storage/log.js";
import { Ctx } from "../../src/workflow/ctx.js";
import { Workflow } from "../../src/workflow/decorators.js";
import { tempDir } from "./harness.js";

@Workflow("budget-note")
class Note {
  constructor(private readonly ctx: Ctx) {}
  async run(text: string): Promise<string> {
    return this.ctx.step("echo", async () => text);
  }
}

function sealedOnDisk(dir: string): Record<string, number> {
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as {
    extra: { codec?: { sealed?: Record<string, number> } };
  };
  return manifest.extra.codec?.sealed ?? {};
}

function setSealedOnDisk(dir: string, sealed: Record<string, number>): void {
  const file = join(dir, "manifest.json");
  const manifest = JSON.parse(readFileSync(file, "utf8")) as { extra: { codec: Record<string, unknown> } };
  manifest.extra.codec.sealed = sealed;
  writeFileSync(file, JSON.stringify(manifest));
}

/** Warnings with the seal budget's code emitted while `body` runs. */
async function warningsDuring(body: () => Promise<void>): Promise<Error[]> {
  const seen: Error[] = [];
  const listener = (w: Error): void => {
    if ((w as Error & { code?: string }).code === SEAL_WARNING_CODE) seen.push(w);
  };
  process.on("warning", listener);
  try {
    await body();
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off("warning", listener);
  }
  return seen;
}

describe("seal counts per key (local)", () => {
  const k1 = randomBytes(32);
  let dir: string;
  beforeEach(() => {
    dir = tempDir("seal-budget");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps the counts across a restart, never below the seals done, and shows them in describeEngine", async () => {
    const first = aesGcm({ k1 });
    let engine = await Engine.open(Config.local(dir).codec(first), { workflows: [Note] });
    for (let i = 0; i < 5; i++) await (await engine.start(Note, `a-${i}`, "x")).result();
    const done1 = first.sealedCount("k1");
    expect(done1).to.be.greaterThan(0);
    const d = engine.describeEngine();
    expect(d).to.include({ storage: "local", runs: 5 });
    expect(d.codec).to.deep.include({ algorithm: "aes-256-gcm", encryptingKeyId: "k1", keyIds: ["k1"], limit: RANDOM_NONCE_LIMIT });
    expect(d.codec!.sealed.k1).to.equal(done1);
    await engine.shutdown();
    expect(sealedOnDisk(dir).k1).to.equal(done1);

    const second = aesGcm({ k1 });
    engine = await Engine.open(Config.local(dir).codec(second), { workflows: [Note] });
    for (let i = 0; i < 3; i++) await (await engine.start(Note, `b-${i}`, "y")).result();
    const total = done1 + second.sealedCount("k1");
    expect(engine.describeEngine().codec!.sealed.k1).to.equal(total);
    await engine.shutdown();
    expect(sealedOnDisk(dir).k1).to.equal(total);
  });

  it("holds a figure ahead of the seals on disk while running, so a crash only over-counts", async () => {
    const cipher = aesGcm({ k1 });
    const engine = await Engine.open(Config.local(dir).codec(cipher), { workflows: [Note] });
    try {
      expect(sealedOnDisk(dir).k1).to.equal(SEAL_RESERVATION);
      for (let i = 0; i < 10; i++) await (await engine.start(Note, `c-${i}`, "z")).result();
      // What a crash at this moment would leave behind.
      expect(sealedOnDisk(dir).k1).to.be.at.least(cipher.sealedCount("k1"));
    } finally {
      await engine.shutdown();
    }
  });

  it("keeps the counts when the keys rotate", async () => {
    let engine = await Engine.open(Config.local(dir).codec(aesGcm({ k1 })), { workflows: [Note] });
    await (await engine.start(Note, "r-1", "x")).result();
    await engine.shutdown();
    const before = sealedOnDisk(dir).k1!;
    engine = await Engine.open(Config.local(dir).codec(aesGcm({ k2: randomBytes(32), k1 })), { workflows: [Note] });
    await (await engine.start(Note, "r-2", "y")).result();
    expect(engine.describeEngine().codec!.sealed.k1).to.equal(before);
    await engine.shutdown();
    expect(sealedOnDisk(dir).k1).to.equal(before);
    expect(sealedOnDisk(dir).k2).to.be.greaterThan(0);
  });

  it("refuses to seal past the limit, naming the key, writes nothing, and warns once", async () => {
    let engine = await Engine.open(Config.local(dir).codec(aesGcm({ k1 })), { workflows: [Note] });
    await (await engine.start(Note, "l-1", "x")).result();
    await engine.shutdown();
    setSealedOnDisk(dir, { k1: RANDOM_NONCE_LIMIT });

    let refused: unknown;
    const warnings = await warningsDuring(async () => {
      engine = await Engine.open(Config.local(dir).codec(aesGcm({ k1 })), { workflows: [Note] });
      expect(engine.describeEngine().codec!.sealed.k1).to.equal(RANDOM_NONCE_LIMIT);
      await engine.start(Note, "l-2", "y").catch(() => undefined);
      refused = await engine.start(Note, "l-3", "z").catch((e: unknown) => e);
    });
    try {
      expect(refused).to.be.instanceOf(CodecError);
      expect((refused as Error).message)
        .to.contain('"k1"')
        .and.contain("rotate to a new key");
      expect(await engine.status("l-3")).to.equal(undefined);
      expect(engine.describeEngine().codec!.sealed.k1).to.equal(RANDOM_NONCE_LIMIT);
      expect(warnings).to.have.length(1);
      expect(warnings[0]!.message).to.contain('"k1"');
    } finally {
      await engine.shutdown();
    }
    expect(sealedOnDisk(dir).k1).to.equal(RANDOM_NONCE_LIMIT);
  });
});

describe("SealBudget", () => {
  /** A log that keeps a manifest in memory, as the local log keeps one on disk. */
  function fakeLog(): Log & { manifest: { extra: Record<string, unknown> }; writes: number } {
    const log = {
      readOnly: false,
      writes: 0,
      manifest: { extra: { codec: { algorithm: "aes-256-gcm", keyIds: ["k1"] } } as Record<string, unknown> },
      async updateManifest(extra: Record<string, unknown>): Promise<void> {
        await new Promise((r) => setImmediate(r));
        log.manifest = { extra: JSON.parse(JSON.stringify(extra)) as Record<string, unknown> };
        log.writes++;
      },
    };
    return log as unknown as Log & typeof log;
  }
  const onDisk = (log: { manifest: { extra: Record<string, unknown> } }): number =>
    (log.manifest.extra.codec as { sealed: Record<string, number> }).sealed.k1!;
  const plain = new Uint8Array(8);
  const aad = new Uint8Array(4);

  it("reserves ahead as it seals, so the figure on disk never falls behind", async () => {
    const log = fakeLog();
    const budget = new SealBudget(aesGcm({ k1: randomBytes(32) }), { reservation: 8 });
    await budget.load(log);
    for (let i = 1; i <= 100; i++) {
      budget.seal(plain, aad);
      expect(onDisk(log)).to.be.at.least(i);
      await new Promise((r) => setImmediate(r));
    }
    expect(log.writes).to.be.greaterThan(10);
    expect(log.manifest.extra.codec).to.deep.include({ algorithm: "aes-256-gcm", keyIds: ["k1"] });
    await budget.settle();
    expect(onDisk(log)).to.equal(100);
  });

  it("refuses to seal past the figure on disk while its next reservation is being written", async () => {
    const log = fakeLog();
    const budget = new SealBudget(aesGcm({ k1: randomBytes(32) }), { reservation: 8 });
    await budget.load(log);
    for (let i = 0; i < 8; i++) budget.seal(plain, aad);
    expect(() => budget.seal(plain, aad)).to.throw(CodecError, "saved");
    expect(budget.count("k1")).to.equal(8);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    budget.seal(plain, aad);
    expect(onDisk(log)).to.be.at.least(9);
  });

  it("refuses at a small limit with a CodecError naming the key and warns once at half", async () => {
    const budget = new SealBudget(aesGcm({ k1: randomBytes(32) }), { limit: 4 });
    let error: unknown;
    const warnings = await warningsDuring(async () => {
      for (let i = 0; i < 4; i++) budget.seal(plain, aad);
      error = (() => {
        try {
          budget.seal(plain, aad);
        } catch (e) {
          return e;
        }
      })();
    });
    expect(error).to.be.instanceOf(CodecError);
    expect((error as Error).message)
      .to.contain('"k1"')
      .and.contain("rotate");
    expect(budget.count("k1")).to.equal(4);
    expect(warnings).to.have.length(1);
  });
});
