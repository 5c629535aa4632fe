import { readRecordHeader } from "../journal/record-codec.js";
import type { JournalRecord } from "../journal/records.js";
import type { Log } from "../storage/log.js";
import type { RunEntry } from "./run-entry.js";

/**
 * Whether the entry's current run holds a record that request `request` appended (a message from
 * another workflow, a cluster's forwarded call). The journal is read once per run: the set is in
 * place before the read, so records that become durable meanwhile are added by {@link noteRequest},
 * and every later question is answered from memory.
 */
export async function performedRequest(log: Log, entry: RunEntry, request: string): Promise<boolean> {
  if (entry.requests !== undefined) return entry.requests.has(request);
  const runId = entry.runId;
  const seen = new Set<string>();
  entry.requests = seen;
  for (const item of await log.read(entry.shard, entry.stream)) {
    const r = readRecordHeader(item.body).request;
    if (typeof r === "string") seen.add(r);
  }
  // A new run of the ID began during the read: ask about that one.
  return entry.runId === runId ? seen.has(request) : performedRequest(log, entry, request);
}

/** Keeps a run's set of performed requests (once it has one) in step with a record that became durable. */
export function noteRequest(entry: RunEntry, record: JournalRecord): void {
  if (entry.requests !== undefined && "request" in record && record.request !== undefined) entry.requests.add(record.request);
}
