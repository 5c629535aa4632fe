import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { aesGcm, decodeValue, encodeValue, SEALED_FORMAT, TypeRegistry } from "../../src/codec/index.js";
import { CodecError } from "../../src/core/errors.js";

const k1 = randomBytes(32);
const k2 = randomBytes(32);
const plain = new TextEncoder().encode("the payload of step charge");
const aad = new TextEncoder().encode("pay-1\u00001\u00007");

function flipped(bytes: Uint8Array, index: number): Uint8Array {
  const copy = bytes.slice();
  copy[index] = (copy[index] as number) ^ 0x01;
  return copy;
}

describe("aesGcm", () => {
  describe("sealing and opening", () => {
    it("opens what it sealed, given the same associated data", () => {
      const cipher = aesGcm({ k1 });
      const sealed = cipher.seal(plain, aad);
      expect([...cipher.open(sealed, aad)]).to.deep.equal([...plain]);
    });

    it("never writes the plaintext in clear, and seals it differently each time", () => {
      const cipher = aesGcm({ k1 });
      const a = cipher.seal(plain, aad);
      const b = cipher.seal(plain, aad);
      expect(Buffer.from(a).includes(Buffer.from("payload"))).to.equal(false);
      expect(Buffer.from(a).equals(Buffer.from(b))).to.equal(false);
    });

    it("writes the format version, the key ID, a 12-byte nonce, the ciphertext and a 16-byte tag", () => {
      const sealed = aesGcm({ "key-2024": k1 }).seal(plain, aad);
      expect(sealed[0]).to.equal(SEALED_FORMAT);
      expect(sealed[1]).to.equal(8);
      expect(Buffer.from(sealed.subarray(2, 10)).toString()).to.equal("key-2024");
      expect(sealed.length).to.equal(2 + 8 + 12 + plain.length + 16);
    });

    it("seals and opens an empty payload and empty associated data", () => {
      const cipher = aesGcm({ k1 });
      const sealed = cipher.seal(new Uint8Array(0), new Uint8Array(0));
      expect(cipher.open(sealed, new Uint8Array(0))).to.have.length(0);
    });

    it("encrypts value payloads end to end", () => {
      const types = new TypeRegistry();
      const cipher = aesGcm({ k1 });
      const value = { at: new Date(5), ids: new Set([1n]) };
      const back = decodeValue(cipher.open(cipher.seal(encodeValue(value, types), aad), aad), types);
      expect(back).to.deep.equal(value);
    });

    it("counts the payloads it sealed per key", () => {
      const cipher = aesGcm({ k2, k1 });
      cipher.seal(plain, aad);
      cipher.seal(plain, aad);
      expect(cipher.sealedCount("k2")).to.equal(2);
      expect(cipher.sealedCount("k1")).to.equal(0);
      expect(() => cipher.sealedCount("k3")).to.throw(CodecError, /key "k3" is not configured/);
    });
  });

  describe("key rotation", () => {
    it("seals with the first key and opens payloads of every configured key", () => {
      const before = aesGcm({ k1 });
      const old = before.seal(plain, aad);
      const after = aesGcm({ k2, k1 });
      expect(after.encryptingKeyId).to.equal("k2");
      expect(after.keyIds).to.deep.equal(["k2", "k1"]);
      expect([...after.open(old, aad)]).to.deep.equal([...plain]);
      const fresh = after.seal(plain, aad);
      expect(after.keyIdOf(fresh)).to.equal("k2");
      expect(after.keyIdOf(old)).to.equal("k1");
    });

    it("refuses a payload sealed with a key that is no longer configured, naming it and the configured ones", () => {
      const old = aesGcm({ k1 }).seal(plain, aad);
      expect(() => aesGcm({ k2 }).open(old, aad))
        .to.throw(CodecError)
        .with.property("message")
        .that.matches(/sealed with key "k1", which is not configured \(configured: "k2"\)/);
    });
  });

  describe("refusals", () => {
    it("refuses to open with a wrong key of the same ID, naming the key ID", () => {
      const sealed = aesGcm({ k1 }).seal(plain, aad);
      expect(() => aesGcm({ k1: k2 }).open(sealed, aad)).to.throw(CodecError, /cannot open payload sealed with key "k1"/);
    });

    it("refuses other associated data, naming the key ID", () => {
      const cipher = aesGcm({ k1 });
      const sealed = cipher.seal(plain, aad);
      const elsewhere = new TextEncoder().encode("pay-1\u00001\u00008");
      expect(() => cipher.open(sealed, elsewhere)).to.throw(CodecError, /key "k1".*associated data differs/);
    });

    it("refuses a payload altered anywhere: nonce, ciphertext, tag or format byte", () => {
      const cipher = aesGcm({ k1 });
      const sealed = cipher.seal(plain, aad);
      for (const index of [4, 4 + 12, sealed.length - 17, sealed.length - 1]) {
        expect(() => cipher.open(flipped(sealed, index), aad), `byte ${index}`).to.throw(CodecError, /key "k1"/);
      }
      expect(() => cipher.open(flipped(sealed, 0), aad)).to.throw(CodecError, /sealed payload has format 0/);
    });

    it("refuses a payload whose key ID was altered to another configured key", () => {
      const cipher = aesGcm({ k1, k3: k2 });
      const sealed = cipher.seal(plain, aad);
      sealed[3] = "3".charCodeAt(0);
      expect(() => cipher.open(sealed, aad)).to.throw(CodecError, /cannot open payload sealed with key "k3"/);
    });

    it("refuses a truncated payload, naming the key ID", () => {
      const cipher = aesGcm({ k1 });
      const sealed = cipher.seal(plain, aad);
      expect(() => cipher.open(sealed.subarray(0, sealed.length - 1), aad)).to.throw(CodecError, /key "k1"/);
      expect(() => cipher.open(sealed.subarray(0, 20), aad)).to.throw(CodecError, /key "k1" is truncated: 20 bytes/);
      expect(() => cipher.open(sealed.subarray(0, 3), aad)).to.throw(CodecError, /too short for its 2-byte key ID/);
      expect(() => cipher.open(sealed.subarray(0, 1), aad)).to.throw(CodecError, /too short to name its key/);
    });

    it("refuses arguments that are not bytes with a CodecError", () => {
      const cipher = aesGcm({ k1 });
      expect(() => cipher.seal("text" as unknown as Uint8Array, aad)).to.throw(CodecError, /plaintext must be a Uint8Array/);
      expect(() => cipher.open(cipher.seal(plain, aad), undefined as unknown as Uint8Array)).to.throw(CodecError, /associated data/);
    });
  });

  describe("configuration", () => {
    it("refuses keys that are not 32 bytes, naming the key ID", () => {
      expect(() => aesGcm({ k1, short: randomBytes(16) })).to.throw(CodecError, /key "short" is 16 bytes; AES-256-GCM needs exactly 32/);
      expect(() => aesGcm({ long: randomBytes(33) })).to.throw(CodecError, /key "long" is 33 bytes/);
      expect(() => aesGcm({ text: "x".repeat(32) as unknown as Uint8Array })).to.throw(CodecError, /key "text" must be a Uint8Array/);
    });

    it("refuses an empty key set", () => {
      expect(() => aesGcm({})).to.throw(CodecError, /at least one key/);
    });

    it("refuses all-digit key IDs, whose object order would not be the written order", () => {
      expect(() => aesGcm({ "2024": k1 })).to.throw(CodecError, /key ID "2024" is all digits.*"k2024"/);
    });

    it("refuses key IDs longer than 255 bytes", () => {
      expect(() => aesGcm({ ["k".repeat(256)]: k1 })).to.throw(CodecError, /1 to 255 bytes/);
    });

    it("keeps its own copy of the keys", () => {
      const key = Buffer.from(k1);
      const cipher = aesGcm({ k1: key });
      const sealed = cipher.seal(plain, aad);
      key.fill(0);
      expect([...cipher.open(sealed, aad)]).to.deep.equal([...plain]);
    });

    it("accepts a Buffer or a Uint8Array as a key and names its algorithm", () => {
      const cipher = aesGcm({ a: k1, b: new Uint8Array(k2) });
      expect(cipher.algorithm).to.equal("aes-256-gcm");
      expect(cipher.keyIds).to.deep.equal(["a", "b"]);
    });
  });
});
