/**
 * A small seeded generator (sfc32) so `ctx.random()` and `ctx.uuid()` give the same sequence on every
 * replay of a run: the seed is journaled in the run's start record.
 */
export class DeterministicRandom {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    for (let i = 0; i < 15; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** A version 4 UUID drawn from the sequence. */
  uuid(): string {
    const bytes = new Uint8Array(16);
    for (let i = 0; i < 16; i += 4) {
      const v = this.nextUint32();
      bytes[i] = v & 0xff;
      bytes[i + 1] = (v >>> 8) & 0xff;
      bytes[i + 2] = (v >>> 16) & 0xff;
      bytes[i + 3] = (v >>> 24) & 0xff;
    }
    bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
    bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}
