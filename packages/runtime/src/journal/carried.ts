import type { Carried, CarriedMessage, CarriedUpdate, JournalRecord } from "./records.js";

/** The header part of a carried message: everything but its user data (a value, an argument, a reason). */
type MessageHeader =
  | { readonly kind: "signal"; readonly at: number; readonly name: string; readonly request?: string; readonly trace?: string }
  | { readonly kind: "update"; readonly at: number; readonly id: string; readonly name: string; readonly trace?: string }
  | { readonly kind: "cancel"; readonly at: number; readonly request?: string };

/** What a start record's header holds of what it carries: no user data, which goes to the payload. */
export interface CarriedHeader {
  readonly messages?: readonly MessageHeader[];
  readonly requests?: readonly (readonly [string, number])[];
  readonly updates?: readonly { readonly id: string; readonly at: number; readonly ok: boolean }[];
}

/** The user data of what a start record carries, in the order of its header's lists. */
export type CarriedValues = readonly [messages: readonly unknown[], updates: readonly unknown[]];

/** Splits what a start carries into its header (names, IDs, times) and its user data. */
export function splitCarried(carried: Carried): { header: CarriedHeader; values: CarriedValues } {
  const messages = carried.messages ?? [];
  const updates = carried.updates ?? [];
  const header: CarriedHeader = {
    ...(messages.length > 0 ? { messages: messages.map(messageHeader) } : {}),
    ...(carried.requests !== undefined && carried.requests.length > 0 ? { requests: carried.requests } : {}),
    ...(updates.length > 0 ? { updates: updates.map((u) => ({ id: u.id, at: u.at, ok: u.ok })) } : {}),
  };
  return { header, values: [messages.map(messageValue), updates.map((u) => (u.ok ? u.value : u.error))] };
}

/** The inverse of {@link splitCarried}. */
export function joinCarried(header: CarriedHeader, values: CarriedValues | undefined): Carried {
  const [messageValues, updateValues] = values ?? [[], []];
  const messages = (header.messages ?? []).map((h, i): CarriedMessage => {
    const value = messageValues[i];
    if (h.kind === "signal") return { ...h, value };
    if (h.kind === "update") return { ...h, arg: value };
    return { ...h, reason: String(value) };
  });
  const updates = (header.updates ?? []).map((h, i): CarriedUpdate =>
    h.ok ? { ...h, value: updateValues[i] } : { ...h, error: updateValues[i] as Error },
  );
  return {
    ...(messages.length > 0 ? { messages } : {}),
    ...(header.requests !== undefined ? { requests: header.requests } : {}),
    ...(updates.length > 0 ? { updates } : {}),
  };
}

/**
 * Every request a start performs or remembers: its own, those it remembers, and those of the
 * messages it carries. Reads a start record or its header alike (their `carried` lists agree).
 */
export function requestsOfStart(header: { readonly request?: unknown; readonly carried?: unknown }): string[] {
  const out: string[] = [];
  if (typeof header.request === "string") out.push(header.request);
  const carried = header.carried as CarriedHeader | undefined;
  for (const [request] of carried?.requests ?? []) out.push(request);
  for (const m of carried?.messages ?? []) if ("request" in m && typeof m.request === "string") out.push(m.request);
  return out;
}

/** The most request and update IDs a run hands on: what it carries stays a small part of one record. */
const MAX_REMEMBERED = 4096;

/**
 * Keeps what earlier runs performed at `now - window` or later, newest `MAX_REMEMBERED` of each, so
 * what a long chain of runs hands on stays bounded.
 */
export function remembered<T extends { readonly at: number } | readonly [string, number]>(
  items: readonly T[],
  now: number,
  windowMs: number,
): T[] {
  const since = now - windowMs;
  const at = (item: T): number => (Array.isArray(item) ? (item[1] as number) : (item as { at: number }).at);
  const kept = items.filter((item) => at(item) >= since);
  return kept.length <= MAX_REMEMBERED ? kept : kept.sort((a, b) => at(a) - at(b)).slice(-MAX_REMEMBERED);
}

function messageHeader(m: CarriedMessage): MessageHeader {
  switch (m.kind) {
    case "signal":
      return { kind: "signal", at: m.at, name: m.name, ...(m.request === undefined ? {} : { request: m.request }), ...traceOf(m) };
    case "update":
      return { kind: "update", at: m.at, id: m.id, name: m.name, ...traceOf(m) };
    case "cancel":
      return { kind: "cancel", at: m.at, ...(m.request === undefined ? {} : { request: m.request }) };
  }
}

function messageValue(m: CarriedMessage): unknown {
  return m.kind === "signal" ? m.value : m.kind === "update" ? m.arg : m.reason;
}

function traceOf(m: { readonly trace?: string }): { trace?: string } {
  return m.trace === undefined ? {} : { trace: m.trace };
}

/** The requests a record performed, or a start remembers, each with when. */
export function performedBy(record: JournalRecord): (readonly [string, number])[] {
  if (record.kind !== "start") return "request" in record && record.request !== undefined ? [[record.request, record.at]] : [];
  const out: (readonly [string, number])[] = record.request === undefined ? [] : [[record.request, record.at]];
  const carried = record.carried;
  if (carried === undefined) return out;
  out.push(...(carried.requests ?? []));
  for (const m of carried.messages ?? []) if (m.kind !== "update" && m.request !== undefined) out.push([m.request, m.at]);
  return out;
}
