import { RunTable } from "./run-table.js";
import { FuseeError } from "../core/errors.js";
import type { PayloadCodec } from "../journal/record-codec.js";
import { isSystemStream, parseStream } from "../journal/stream-names.js";
import type { LogEntry } from "../storage/log.js";
import type { RecoveryVisitor } from "../storage/recovery-visitor.js";
import type { RunEntry } from "./run-entry.js";
import { type AttributeSink, RunIndex } from "./run-index.js";

/** A record setting search attributes, kept until the payload codec was checked. */
interface HeldAttributes {
  readonly body: Uint8Array;
  readonly position: number;
}

/**
 * Builds the engine's index of runs while a local log's recovery reads the journals, so that open
 * reads them once. It sees every record recovery keeps, in log order, including records a later
 * tombstone drops: a drop of a run's current stream (retention, a superseded run) takes the run's
 * entry out again, which leaves the index a scan of the live records would build.
 *
 * What it leaves to the engine once the open's checks passed: decoding search attributes (the codec
 * may be the wrong one, which the checks report first), arming timers, the engine's own streams
 * (read then from the few that are live) and dropping superseded streams. A shard whose records it
 * cannot index the way a scan would (a record before its run's start that no later tombstone drops,
 * a dropped current run with an older run still live) is left to a scan: {@link needsScan}.
 */
export class RunRecovery implements RecoveryVisitor {
  private readonly index = new RunIndex({
    codec: UNCHECKED,
    // Timers are armed once the pass is over, for the runs it leaves indexed: their due times wait here.
    armTimer: (until, entry, seq) => this.timers.push(until, entry, seq, entry.runId),
    recoverSystem: () => undefined,
  });
  private timers = new PendingTimers();
  private readonly superseded: Set<string>[] = [];
  private readonly system: Set<string>[] = [];
  private readonly held = new Map<RunEntry, HeldAttributes[]>();
  private readonly scans = new Set<number>();
  /**
   * Per shard, streams met with a record before their start, ignored until a tombstone drops them.
   * Compaction rewrites sealed segments only, so a stream dropped in the active segment may have lost
   * its start there while its later records, dead too, stay in the active segment before the tombstone.
   */
  private readonly headless: Set<string>[] = [];
  private readonly sink: AttributeSink = {
    take: (entry, body, position) => {
      let list = this.held.get(entry);
      if (list === undefined) this.held.set(entry, (list = []));
      // A copy: the body is a view into a read buffer that recovery reuses (a Buffer's slice is a view too).
      list.push({ body: new Uint8Array(body), position });
    },
    reset: (entry) => {
      this.held.delete(entry);
    },
  };

  /**
   * The runs indexed: the map the engine's index takes over, so open builds it once. Entries of a
   * shard that {@link needsScan} are to be removed before the scan.
   */
  get runs(): RunTable {
    return this.index.runs;
  }

  entry(shard: number, stream: string, body: Uint8Array): void {
    if (this.scans.has(shard)) return;
    if (isSystemStream(stream)) {
      (this.system[shard] ??= new Set()).add(stream);
      return;
    }
    if (this.headless[shard]?.has(stream) === true) return;
    try {
      this.index.recoverRun(shard, stream, body, this.supersededOf(shard), this.sink, () =>
        (this.headless[shard] ??= new Set()).add(stream),
      );
    } catch {
      // The scan after the checks reads the shard's live records and reports what is wrong.
      this.scans.add(shard);
    }
  }

  dropped(shard: number, stream: string): void {
    if (this.scans.has(shard)) return;
    // A scan would not see the records before the tombstone, nor fail on them.
    this.headless[shard]?.delete(stream);
    this.index.forgetCopy(stream);
    if (isSystemStream(stream)) {
      this.system[shard]?.delete(stream);
      return;
    }
    const superseded = this.supersededOf(shard);
    superseded.delete(stream);
    const run = parseStream(stream);
    if (run === undefined) return;
    const entry = this.index.runs.get(run.id);
    if (entry === undefined || entry.stream !== stream) return;
    for (const other of superseded) {
      // A scan would find that older run's records live and index it.
      if (parseStream(other)?.id === run.id) {
        this.scans.add(shard);
        return;
      }
    }
    this.index.runs.delete(run.id);
    // Its timers are not to be armed: `eachTimer` asks the entry rather than the map.
    entry.clearTimers();
    this.held.delete(entry);
  }

  /** Streams of resets of the shard whose copy a power loss cut short (see `RunIndex.cutCopies`). */
  cutCopies(shard: number): string[] {
    return this.index.cutCopies(shard);
  }

  /** Whether the shard's runs are to be read by a scan after all; its entries here are to be ignored. */
  needsScan(shard: number): boolean {
    return this.scans.has(shard) || (this.headless[shard]?.size ?? 0) > 0;
  }

  /** Streams of runs that a later run of the same ID replaced and that are still live, in the order found. */
  supersededOf(shard: number): Set<string> {
    return (this.superseded[shard] ??= new Set());
  }

  /** Lets go of what the pass kept for the engine once the engine took it (the runs stay the index's). */
  finished(): void {
    this.held.clear();
    this.timers = new PendingTimers();
    this.superseded.length = 0;
    this.headless.length = 0;
    this.system.length = 0;
  }

  /** The engine's own streams of the shard that hold live records. */
  systemStreams(shard: number): string[] {
    return [...(this.system[shard] ?? [])];
  }

  /** Calls `fn` with each timer still pending of a run still indexed, in the order they were set. */
  eachTimer(fn: (until: number, entry: RunEntry, seq: number, runId: number) => void): void {
    // An entry taken out of the index lost its timers (`dropped`), or is of a shard left to a scan.
    const { untils, entries, seqs, runIds, size } = this.timers;
    for (let i = 0; i < size; i++) {
      const entry = entries[i]!;
      const seq = seqs[i]!;
      const runId = runIds[i]!;
      if (entry.runId === runId && entry.hasTimer(seq) && !this.needsScan(entry.shard)) fn(untils[i]!, entry, seq, runId);
    }
  }

  /** Calls `fn` with each held attributes record of a run still indexed, each run's in log order. */
  eachAttributes(fn: (entry: RunEntry, body: Uint8Array, position: number) => void): void {
    for (const [entry, list] of this.held) {
      if (this.needsScan(entry.shard) || this.index.runs.get(entry.id) !== entry) continue;
      for (const { body, position } of list) fn(entry, body, position);
    }
  }
}

/**
 * The timers read in the pass, as parallel arrays rather than an object each: an open of many
 * parked runs reads one per run, and objects that live through the pass cost the collector.
 */
class PendingTimers {
  untils: Float64Array = new Float64Array(1024);
  readonly entries: RunEntry[] = [];
  seqs: Float64Array = new Float64Array(1024);
  runIds: Float64Array = new Float64Array(1024);
  size = 0;

  push(until: number, entry: RunEntry, seq: number, runId: number): void {
    const i = this.size;
    if (i === this.untils.length) {
      this.untils = doubled(this.untils);
      this.seqs = doubled(this.seqs);
      this.runIds = doubled(this.runIds);
    }
    this.untils[i] = until;
    this.entries.push(entry);
    this.seqs[i] = seq;
    this.runIds[i] = runId;
    this.size = i + 1;
  }
}

function doubled(from: Float64Array): Float64Array {
  const to = new Float64Array(from.length * 2);
  to.set(from);
  return to;
}

/** How the engine reads its own streams after a one-pass open: a local log's positioned reads. */
export interface StreamReader {
  /** The live entries of the given streams of a shard, in log order. */
  readStreams(shard: number, streams: readonly string[]): readonly LogEntry[];
}

/** Records of runs are decoded only after the open checked the codec; this one is never called. */
const UNCHECKED: PayloadCodec = {
  encodeValue: unchecked,
  decodeValue: unchecked,
  encodeError: unchecked,
  decodeError: unchecked,
};

function unchecked(): never {
  throw new FuseeError("a payload was decoded while the data directory was being read, before its codec was checked");
}
