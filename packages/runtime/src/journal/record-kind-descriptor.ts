import type { RecordKind, RecordOf } from "./records.js";

/** Turns the user data of a record being encoded into its payload (which the codec may encrypt). */
export interface PayloadWriter {
  value(value: unknown): Uint8Array;
  error(error: unknown): Uint8Array;
}

/** Reads the payload of a record being decoded, the way its kind stored it. */
export interface PayloadReader {
  value(): unknown;
  error(): Error;
}

/** A header as written to disk: the fields the engine reads without touching the payload. */
export type Header = Readonly<Record<string, unknown>>;

/**
 * Everything about one record kind: how it is stored, what the engine's index and wake rules make of
 * it, and how errors name it. A new record kind is its type in `records.ts` and an entry in
 * `RECORD_KINDS` (`record-kinds.ts`, whose type requires one per kind); its meaning to a run is a
 * feature module's applier.
 */
export interface RecordKindDescriptor<K extends RecordKind, H extends Header = Header> {
  /** The byte that names the kind on disk: fixed forever once data was written with it. */
  readonly code: number;
  /**
   * Set for records that answer a numbered call of the workflow code; gives the name replay checks
   * the code's call against (a step's name, a patch's ID, a child's ID), if the kind has one.
   */
  readonly call?: (record: RecordOf<K>) => string | undefined;
  /** The engine's run index reads the header of records of this kind when it opens the log. */
  readonly indexed: boolean;
  /** A record of this kind wakes a parked run once it is durable. */
  readonly wakes: boolean;
  /** True when decoding the record gives back equal values of the same types, so it can be used as it is. */
  readsBack(record: RecordOf<K>): boolean;
  /** A short human description for error messages: `step 'charge' (call #2)`. */
  describe(record: RecordOf<K>): string;
  /** Splits a record into the header (never user data) and the payload (all user data). */
  encode(record: RecordOf<K>, payload: PayloadWriter): { header: H; payload: Uint8Array };
  /** The inverse of `encode`. */
  decode(header: H, payload: PayloadReader): RecordOf<K>;
}

// What several descriptors write alike, so each field is stored one way by every kind that has it.

/** The payload of a record that holds no user data. */
export const EMPTY = new Uint8Array(0);
export const never = (): boolean => false;
export const always = (): boolean => true;

/** The `request` field of a record or header, when it has one (records a cluster request performed). */
export function request(from: { readonly request?: unknown }): { request?: string } {
  return typeof from.request === "string" ? { request: from.request } : {};
}

/** The `trace` field of a record or header, when it has one (the trace context of the call that made it). */
export function trace(from: { readonly trace?: unknown }): { trace?: string } {
  return typeof from.trace === "string" ? { trace: from.trace } : {};
}

/** Whether a value reads back from its payload equal and of the same type. */
export function isPrimitive(v: unknown): boolean {
  return v === null || (typeof v !== "object" && typeof v !== "function" && typeof v !== "symbol");
}

/** The value or the error of an outcome, as a payload. */
export function outcome(ok: boolean, r: { readonly value?: unknown; readonly error?: Error }, p: PayloadWriter): Uint8Array {
  return ok ? p.value(r.value) : p.error(r.error);
}
