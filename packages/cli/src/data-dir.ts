import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  aesGcm,
  ConfigError,
  DataDirReader,
  FuseeError,
  RejectedError,
  type DataDirOptions,
  type PayloadCipher,
  type RecoveryCutEvent,
} from "@fusee/runtime";
import type { Command } from "commander";
import { ExitCode } from "./exit-codes.js";
import { type Io, paint } from "./io.js";

/** Flags every command that reads a data directory takes. */
export interface DataDirFlags {
  data: string;
  keys?: string;
  json?: boolean;
}

/** Adds `--data DIR` and `--keys FILE` to a command. */
export function dataDirOptions(command: Command): Command {
  return command
    .requiredOption("-d, --data <dir>", "the data directory (read only; an engine may be running on it)")
    .option("--keys <file>", 'JSON file of the payload keys, { "k1": "<base64 of 32 bytes>" }, to read encrypted payloads');
}

/** A usage problem: the command line or a file it names is wrong. */
export class UsageError extends Error {}

/** Reads `--keys FILE` into a cipher. */
export function cipherFrom(io: Io, keysFile: string | undefined): PayloadCipher | undefined {
  if (keysFile === undefined) return undefined;
  const file = resolve(io.cwd, keysFile);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new UsageError(`cannot read the keys file ${file}: ${(e as Error).message}`);
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new UsageError(`the keys file ${file} must hold an object of key IDs to base64 keys, { "k1": "..." }`);
  }
  const keys: Record<string, Uint8Array> = {};
  for (const [id, value] of Object.entries(data)) {
    if (typeof value !== "string") throw new UsageError(`key "${id}" in ${file} must be a base64 string`);
    keys[id] = Buffer.from(value, "base64");
  }
  try {
    return aesGcm(keys);
  } catch (e) {
    throw new UsageError(`the keys file ${file}: ${(e as Error).message}`);
  }
}

/**
 * Opens the data directory named by the flags, read-only, and says on standard error what it left
 * out: one line per write torn by a crash (only when no engine runs on the directory; damage fails
 * the open instead).
 */
export async function openDataDir(io: Io, flags: DataDirFlags, command: string): Promise<DataDirReader> {
  const cipher = cipherFrom(io, flags.keys);
  const options: DataDirOptions = cipher === undefined ? {} : { cipher };
  const reader = await DataDirReader.open(resolve(io.cwd, flags.data), options);
  for (const cut of reader.recoveryEvents()) io.stderr.write(`${paint(io.color).yellow(`fusee ${command}: ${cutLine(cut)}`)}\n`);
  return reader;
}

/** One line saying what a read-only open left out and why. */
function cutLine(cut: RecoveryCutEvent): string {
  return (
    `shard ${cut.shard}: left out ${cut.discardedBytes} bytes at offset ${cut.offset} of segment ${cut.segment}, ` +
    `a write torn by a crash (${cut.reason}); the directory was not changed, the next engine open cuts them`
  );
}

/**
 * Prints an error of a data directory command and returns its exit code: 2 for a wrong command line
 * or configuration (a bad filter, an unreadable keys file), 1 when the directory could not be read.
 */
export function reportError(io: Io, command: string, error: unknown, json: boolean): number {
  const usage = error instanceof UsageError || error instanceof RejectedError || error instanceof ConfigError;
  const code = usage ? ExitCode.Usage : error instanceof FuseeError ? ExitCode.Failed : ExitCode.Internal;
  const message = error instanceof Error ? error.message : String(error);
  if (json) {
    const errorCode = error instanceof FuseeError ? error.code : usage ? "FUSEE_USAGE" : "FUSEE_INTERNAL";
    io.stdout.write(`${JSON.stringify({ ok: false, error: { code: errorCode, message } })}\n`);
  } else {
    const detail = code === ExitCode.Internal && error instanceof Error ? (error.stack ?? message) : message;
    io.stderr.write(`${paint(io.color).red(`fusee ${command}: ${detail}`)}\n`);
  }
  return code;
}

/** JSON text for any value a journal holds: bigints as strings, maps and sets as arrays. */
export function toJson(value: unknown, indent?: number): string {
  return JSON.stringify(
    value,
    (_key, v: unknown) => {
      if (typeof v === "bigint") return v.toString();
      if (v instanceof Map) return [...v.entries()];
      if (v instanceof Set) return [...v.values()];
      return v;
    },
    indent,
  );
}

/** An instant for people: ISO 8601 in UTC, to the millisecond. */
export function instant(ms: number | undefined): string {
  return ms === undefined || !Number.isFinite(ms) ? "-" : new Date(ms).toISOString();
}

/** A one-line rendering cut to `max` characters. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Lays out rows as columns separated by two spaces. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** True when `stream` is a terminal, where progress bars are drawn. */
export function isTerminal(stream: unknown): stream is NodeJS.WriteStream {
  return (stream as { isTTY?: boolean } | undefined)?.isTTY === true;
}

/** Parses a `--limit` value: a whole number ≥ 0. */
export function parseLimit(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--limit must be a whole number ≥ 0; got ${text}`);
  return n;
}
