import { RejectedError } from "../core/errors.js";
import { readRecordHeader } from "../journal/record-codec.js";
import { requestsOfStart } from "../journal/carried.js";
import type { JournalRecord } from "../journal/records.js";
import type { Log } from "../storage/log.js";
import type { RunEntry } from "./run-entry.js";

/** Journal reads under way, by run entry: a question asked during one waits for it, not for the set it fills. */
const reading = new WeakMap<RunEntry, Promise<void>>();

/**
 * Whether the entry's current run holds a record that request `request` appended (a message from
 * another workflow, a cluster's context call), or remembers one from a run it replaced. The journal is read once per run: the set is in
 * place before the read, so records that become durable meanwhile are added by {@link noteRequest},
 * and every later question is answered from memory. Questions asked while the read is under way
 * (a new owner answering many forwarded requests at once) wait for it: the set holds only part of
 * the journal until then.
 */
export async function performedRequest(log: Log, entry: RunEntry, request: string): Promise<boolean> {
  const under = reading.get(entry);
  if (under !== undefined) {
    await under.catch(() => undefined);
    return performedRequest(log, entry, request);
  }
  if (entry.requests !== undefined) return entry.requests.has(request);
  const runId = entry.runId;
  const seen = new Set<string>();
  entry.requests = seen;
  const read = (async () => {
    for (const item of await log.read(entry.shard, entry.stream)) {
      const header = readRecordHeader(item.body);
      if (header.kind === "start") for (const r of requestsOfStart(header as { request?: unknown; carried?: unknown })) seen.add(r);
      else if (typeof header.request === "string") seen.add(header.request);
    }
  })();
  reading.set(entry, read);
  try {
    await read;
  } catch (e) {
    // A set filled from part of the journal would answer wrongly: the next question reads it again.
    if (entry.requests === seen) entry.requests = undefined;
    throw e;
  } finally {
    reading.delete(entry);
  }
  // A new run of the ID began during the read: ask about that one.
  return entry.runId === runId ? seen.has(request) : performedRequest(log, entry, request);
}

/** Keeps a run's set of performed requests (once it has one) in step with a record that became durable. */
export function noteRequest(entry: RunEntry, record: JournalRecord): void {
  const requests = entry.requests;
  if (requests === undefined) return;
  if (record.kind === "start") for (const r of requestsOfStart(record)) requests.add(r);
  else if ("request" in record && record.request !== undefined) requests.add(record.request);
}
/**
 * Appends a record that performs `request` (when there is one), which the run counts as performed
 * from the append on, not only once the record is durable, so a copy of the request arriving
 * meanwhile is not performed again; a record refused (the run finished, too large) performed nothing.
 */
export async function appendPerforming(
  records: { append(entry: RunEntry, record: JournalRecord): Promise<void> },
  entry: RunEntry,
  record: JournalRecord,
  request: string | undefined,
): Promise<void> {
  if (request === undefined) return records.append(entry, record);
  entry.requests?.add(request);
  try {
    await records.append(entry, { ...record, request } as JournalRecord);
  } catch (e) {
    if (e instanceof RejectedError) entry.requests?.delete(request);
    throw e;
  }
}

/** The field a record carries when it performs a cluster request. */
export function requestField(request: string | undefined): { request?: string } {
  return request === undefined ? {} : { request };
}
