import type { Stage } from "./model.js";

/** What the display shows for an order: its stage, or how it ended. */
export type Glyph = Stage | "ok" | "failed" | "unknown";

const GLYPHS: Readonly<Record<Glyph, string>> = {
  reserving: "r",
  charging: "c",
  packing: "p",
  "cooling-off": "z",
  shipping: "s",
  shipped: "s",
  compensating: "!",
  ok: "✓",
  failed: "✗",
  unknown: "·",
};

export const LEGEND = "r reserving · c charging · p packing · z cooling-off · s shipping · ! compensating · ✓ shipped · ✗ failed";

interface Output {
  readonly isTTY?: boolean;
  write(text: string): boolean;
}

/**
 * A compact progress display: one glyph per order in a bar, with event lines above it. On a terminal
 * the bar is redrawn in place; otherwise it is printed as a line whenever it changed (at most every
 * 400 ms), so logs stay short.
 */
export class Display {
  private readonly glyphs = new Map<string, Glyph>();
  private lastPlain = "";
  private lastPlainAt = 0;
  private barShown = false;

  constructor(
    private readonly out: Output,
    ids: readonly string[],
    private readonly startedAt: number,
  ) {
    for (const id of ids) this.glyphs.set(id, "unknown");
  }

  set(id: string, glyph: Glyph): void {
    this.glyphs.set(id, glyph);
  }

  /** Prints a line about one order above the bar. */
  event(id: string, text: string): void {
    this.line(`${id.padEnd(9)} ${text}`);
  }

  /** Prints a line above the bar. */
  line(text: string): void {
    this.clearBar();
    this.out.write(`${text}\n`);
    if (this.barShown) this.drawBar();
  }

  /** Redraws the bar (on a terminal) or prints it when it changed (elsewhere). */
  render(force = false): void {
    if (this.out.isTTY) {
      this.barShown = true;
      this.clearBar();
      this.drawBar();
      return;
    }
    const bar = this.bar();
    const now = Date.now();
    if (force || (bar !== this.lastPlain && now - this.lastPlainAt >= 400)) {
      this.out.write(`${bar} ${this.elapsed()}\n`);
      this.lastPlain = bar;
      this.lastPlainAt = now;
    }
  }

  /** Leaves the bar where it is and moves below it. */
  finish(): void {
    if (this.out.isTTY && this.barShown) this.out.write("\n");
    else if (this.bar() !== this.lastPlain) this.render(true);
    this.barShown = false;
  }

  private bar(): string {
    const all = [...this.glyphs.values()];
    const ok = all.filter((g) => g === "ok").length;
    const failed = all.filter((g) => g === "failed").length;
    return `[${all.map((g) => GLYPHS[g]).join("")}] ${ok}/${all.length} shipped${failed > 0 ? ` · ${failed} failed` : ""}`;
  }

  private elapsed(): string {
    return `${((Date.now() - this.startedAt) / 1000).toFixed(1)}s`;
  }

  private drawBar(): void {
    this.out.write(`${this.bar()} ${this.elapsed()}`);
  }

  private clearBar(): void {
    if (this.out.isTTY && this.barShown) this.out.write("\r\x1b[K");
  }
}
