import { appendFileSync, existsSync, mkdirSync, readFileSync, truncateSync } from "node:fs";
import { dirname } from "node:path";

/** A ledger entry: every effect a service performs is filed under the idempotency key that caused it. */
export interface Keyed {
  readonly key: string;
}

/**
 * An append-only JSON-lines file of a service's effects, indexed by idempotency key. Each entry is
 * written with one synchronous `write` before the call that caused it returns, so an effect is either
 * in the file or did not happen, even when the process is killed.
 */
export class Ledger<E extends Keyed> {
  private readonly byKey = new Map<string, E>();
  private readonly all: E[] = [];

  constructor(readonly file: string) {
    mkdirSync(dirname(file), { recursive: true });
    if (!existsSync(file)) return;
    const text = readFileSync(file, "utf8");
    // A kill in the middle of a write can leave a partial last line; it never happened, so drop it.
    const end = text.lastIndexOf("\n") + 1;
    if (end < text.length) truncateSync(file, Buffer.byteLength(text.slice(0, end)));
    for (const entry of Ledger.parse<E>(text.slice(0, end))) this.remember(entry);
  }

  /** The entries of a ledger file, oldest first; a partial last line is ignored. */
  static read<E extends Keyed>(file: string): E[] {
    if (!existsSync(file)) return [];
    const text = readFileSync(file, "utf8");
    return Ledger.parse<E>(text.slice(0, text.lastIndexOf("\n") + 1));
  }

  private static parse<E>(text: string): E[] {
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as E);
  }

  /** The entry filed under `key`, if that effect already happened. */
  get(key: string): E | undefined {
    return this.byKey.get(key);
  }

  entries(): readonly E[] {
    return this.all;
  }

  /** Files a new effect; it is in the file when this returns. */
  append(entry: E): E {
    appendFileSync(this.file, `${JSON.stringify(entry)}\n`);
    this.remember(entry);
    return entry;
  }

  private remember(entry: E): void {
    this.byKey.set(entry.key, entry);
    this.all.push(entry);
  }
}
