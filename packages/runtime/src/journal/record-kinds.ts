import { type CarriedHeader, type CarriedValues, joinCarried, splitCarried } from "./carried.js";
import {
  EMPTY,
  always,
  isPrimitive,
  never,
  outcome,
  request,
  trace,
  type Header,
  type RecordKindDescriptor,
} from "./record-kind-descriptor.js";
import type {
  AttemptRecord,
  AttributesRecord,
  CallRecord,
  CancelRecord,
  ChildRecord,
  ChildResultRecord,
  CompletionRecord,
  FinishRecord,
  FiredRecord,
  HeartbeatRecord,
  JournalRecord,
  PatchRecord,
  RecordKind,
  ResumedRecord,
  StoppedRecord,
  SignalRecord,
  StartRecord,
  StepRecord,
  TimerRecord,
  UpdateRecord,
  UpdateResultRecord,
} from "./records.js";

type StartHeader = Pick<StartRecord, "at" | "type" | "runId" | "seed" | "from" | "copied" | "parent" | "request" | "trace" | "flags"> & {
  update?: { id: string; name: string };
  signal?: { name: string };
  /** Set when the payload holds start attributes, which the index then reads. */
  attributes?: true;
  carried?: CarriedHeader;
};
type StepHeader = Pick<StepRecord, "at" | "seq" | "name" | "ok" | "attempts" | "args">;
type AttemptHeader = Pick<AttemptRecord, "at" | "seq" | "name" | "attempt" | "retryAt" | "since">;
type SignalHeader = Pick<SignalRecord, "at" | "name" | "request" | "trace">;
type UpdateHeader = Pick<UpdateRecord, "at" | "id" | "name" | "trace">;
type UpdateResultHeader = Pick<UpdateResultRecord, "at" | "id" | "ok">;
type TimerHeader = Pick<TimerRecord, "at" | "seq" | "until">;
type FiredHeader = Pick<FiredRecord, "at" | "seq">;
type PatchHeader = Pick<PatchRecord, "at" | "seq" | "id">;
type AttributesHeader = Pick<AttributesRecord, "at" | "seq" | "removed">;
type HeartbeatHeader = Pick<HeartbeatRecord, "at" | "seq">;
type CompletionHeader = Pick<CompletionRecord, "at" | "ok" | "request">;
type ChildHeader = Pick<ChildRecord, "at" | "seq" | "childId" | "ok" | "childRunId" | "close">;
type ChildResultHeader = Pick<ChildResultRecord, "at" | "seq" | "childId" | "status">;
type CancelHeader = Pick<CancelRecord, "at" | "request">;
type FinishHeader = Pick<FinishRecord, "at" | "status" | "request">;
type StoppedHeader = Pick<StoppedRecord, "at" | "code" | "message">;
type ResumedHeader = Pick<ResumedRecord, "at">;

const start: RecordKindDescriptor<"start", StartHeader> = {
  code: 1,
  indexed: true,
  wakes: false,
  readsBack: (r) => r.update === undefined && r.carried === undefined && isPrimitive(r.input),
  describe: (r) => `start of ${r.type} run ${r.runId}`,
  encode: (r, p) => {
    const carried = r.carried === undefined ? undefined : splitCarried(r.carried);
    return {
      header: {
        at: r.at,
        type: r.type,
        runId: r.runId,
        seed: r.seed,
        ...(r.update ? { update: { id: r.update.id, name: r.update.name } } : {}),
        ...(r.from ? { from: r.from } : {}),
        ...(r.copied !== undefined ? { copied: r.copied } : {}),
        ...(r.parent ? { parent: r.parent } : {}),
        ...request(r),
        ...trace(r),
        ...(r.signal ? { signal: { name: r.signal.name } } : {}),
        ...(r.attributes ? { attributes: true as const } : {}),
        ...(carried ? { carried: carried.header } : {}),
        ...(r.flags !== undefined && r.flags.length > 0 ? { flags: r.flags } : {}),
      },
      // The payload grows only for starts that carry attributes, a signal or a replaced run's messages, so older starts read as they were.
      payload: p.value(
        carried
          ? [r.input, r.update?.arg, r.attributes, r.signal?.value, carried.values]
          : r.attributes || r.signal
            ? [r.input, r.update?.arg, r.attributes, r.signal?.value]
            : [r.input, r.update?.arg],
      ),
    };
  },
  decode: (h, p) => {
    const [input, updateArg, attributes, signalValue, carriedValues] = p.value() as [
      unknown,
      unknown,
      Record<string, unknown> | undefined,
      unknown,
      CarriedValues | undefined,
    ];
    return {
      kind: "start",
      at: h.at,
      type: h.type,
      runId: h.runId,
      seed: h.seed,
      input,
      ...(h.update ? { update: { id: h.update.id, name: h.update.name, arg: updateArg } } : {}),
      ...(h.signal ? { signal: { name: h.signal.name, value: signalValue } } : {}),
      ...(h.attributes && attributes ? { attributes } : {}),
      ...(h.from ? { from: h.from } : {}),
      ...(typeof h.copied === "number" ? { copied: h.copied } : {}),
      ...(h.parent ? { parent: h.parent } : {}),
      ...request(h),
      ...trace(h),
      ...(h.carried ? { carried: joinCarried(h.carried, carriedValues) } : {}),
      ...(Array.isArray(h.flags) ? { flags: h.flags } : {}),
    };
  },
};

// Written by `record-codec.ts` byte by byte whenever its times and counts are whole numbers; the
// header's fields and their order must stay those of this `encode`.
const step: RecordKindDescriptor<"step", StepHeader> = {
  code: 2,
  call: (r) => r.name,
  indexed: false,
  wakes: false,
  readsBack: (r) => r.ok && isPrimitive(r.value),
  describe: (r) => `step '${r.name}' (call #${r.seq})`,
  encode: (r, p) => ({
    header: { at: r.at, seq: r.seq, name: r.name, ok: r.ok, attempts: r.attempts, ...(r.args === undefined ? {} : { args: r.args }) },
    payload: outcome(r.ok, r, p),
  }),
  decode: (h, p) => ({
    kind: "step",
    at: h.at,
    seq: h.seq,
    name: h.name,
    ok: h.ok,
    attempts: h.attempts,
    ...(typeof h.args === "string" ? { args: h.args } : {}),
    ...(h.ok ? { value: p.value() } : { error: p.error() }),
  }),
};

const signal: RecordKindDescriptor<"signal", SignalHeader> = {
  code: 3,
  indexed: false,
  wakes: true,
  readsBack: (r) => isPrimitive(r.value),
  describe: (r) => `signal '${r.name}'`,
  encode: (r, p) => ({ header: { at: r.at, name: r.name, ...request(r), ...trace(r) }, payload: p.value(r.value) }),
  decode: (h, p) => ({ kind: "signal", at: h.at, name: h.name, value: p.value(), ...request(h), ...trace(h) }),
};

const update: RecordKindDescriptor<"update", UpdateHeader> = {
  code: 4,
  indexed: false,
  wakes: true,
  readsBack: never,
  describe: (r) => `update '${r.name}' (id ${r.id})`,
  encode: (r, p) => ({ header: { at: r.at, id: r.id, name: r.name, ...trace(r) }, payload: p.value(r.arg) }),
  decode: (h, p) => ({ kind: "update", at: h.at, id: h.id, name: h.name, arg: p.value(), ...trace(h) }),
};

const updateResult: RecordKindDescriptor<"update-result", UpdateResultHeader> = {
  code: 5,
  indexed: false,
  wakes: false,
  readsBack: never,
  describe: (r) => `result of update ${r.id}`,
  encode: (r, p) => ({ header: { at: r.at, id: r.id, ok: r.ok }, payload: outcome(r.ok, r, p) }),
  decode: (h, p) => ({ kind: "update-result", at: h.at, id: h.id, ok: h.ok, ...(h.ok ? { value: p.value() } : { error: p.error() }) }),
};

const timer: RecordKindDescriptor<"timer", TimerHeader> = {
  code: 6,
  call: () => undefined,
  indexed: true,
  wakes: false,
  readsBack: always,
  describe: (r) => `timer until ${new Date(r.until).toISOString()} (call #${r.seq})`,
  encode: (r) => ({ header: { at: r.at, seq: r.seq, until: r.until }, payload: EMPTY }),
  decode: (h) => ({ kind: "timer", at: h.at, seq: h.seq, until: h.until }),
};

const fired: RecordKindDescriptor<"fired", FiredHeader> = {
  code: 7,
  indexed: true,
  wakes: true,
  readsBack: always,
  describe: (r) => `timer fired (call #${r.seq})`,
  encode: (r) => ({ header: { at: r.at, seq: r.seq }, payload: EMPTY }),
  decode: (h) => ({ kind: "fired", at: h.at, seq: h.seq }),
};

const patch: RecordKindDescriptor<"patch", PatchHeader> = {
  code: 8,
  call: (r) => r.id,
  indexed: false,
  wakes: false,
  readsBack: always,
  describe: (r) => `patch '${r.id}' (call #${r.seq})`,
  encode: (r) => ({ header: { at: r.at, seq: r.seq, id: r.id }, payload: EMPTY }),
  decode: (h) => ({ kind: "patch", at: h.at, seq: h.seq, id: h.id }),
};

// Indexed although its attributes live in the payload: the index decodes these records whole.
const attributes: RecordKindDescriptor<"attributes", AttributesHeader> = {
  code: 9,
  call: () => undefined,
  indexed: true,
  wakes: false,
  readsBack: never,
  describe: (r) => `attributes (call #${r.seq})`,
  encode: (r, p) => ({
    header: { at: r.at, seq: r.seq, ...(r.removed?.length ? { removed: r.removed } : {}) },
    payload: p.value(r.attributes),
  }),
  decode: (h, p) => ({
    kind: "attributes",
    at: h.at,
    seq: h.seq,
    attributes: p.value() as Record<string, unknown>,
    ...(h.removed ? { removed: h.removed } : {}),
  }),
};

const finish: RecordKindDescriptor<"finish", FinishHeader> = {
  code: 10,
  indexed: true,
  wakes: false,
  readsBack: (r) => r.status === "ok" && isPrimitive(r.value),
  describe: (r) => `finish (${r.status})`,
  encode: (r, p) => ({ header: { at: r.at, status: r.status, ...request(r) }, payload: outcome(r.status === "ok", r, p) }),
  decode: (h, p) => ({
    kind: "finish",
    at: h.at,
    status: h.status,
    ...(h.status === "ok" ? { value: p.value() } : { error: p.error() }),
    ...request(h),
  }),
};

const heartbeat: RecordKindDescriptor<"heartbeat", HeartbeatHeader> = {
  code: 11,
  indexed: false,
  wakes: false,
  readsBack: never,
  describe: (r) => `heartbeat of call #${r.seq}`,
  encode: (r, p) => ({ header: { at: r.at, seq: r.seq }, payload: p.value(r.progress) }),
  decode: (h, p) => ({ kind: "heartbeat", at: h.at, seq: h.seq, progress: p.value() }),
};

// The token is a bearer capability, so it travels in the (encryptable) payload, not the header.
const completion: RecordKindDescriptor<"completion", CompletionHeader> = {
  code: 12,
  indexed: false,
  wakes: true,
  readsBack: never,
  describe: () => `completion of a token`,
  encode: (r, p) => ({
    header: { at: r.at, ok: r.ok, ...request(r) },
    payload: p.value(r.ok ? { token: r.token, value: r.value } : { token: r.token, error: r.error }),
  }),
  decode: (h, p) => {
    const answer = p.value() as { token: string; value?: unknown; error?: Error };
    return {
      kind: "completion",
      at: h.at,
      token: answer.token,
      ok: h.ok,
      ...(h.ok ? { value: answer.value } : { error: answer.error as Error }),
      ...request(h),
    };
  },
};

const child: RecordKindDescriptor<"child", ChildHeader> = {
  code: 13,
  call: (r) => r.childId,
  indexed: true,
  wakes: true,
  readsBack: never,
  describe: (r) => `child '${r.childId}' (call #${r.seq})`,
  encode: (r, p) => ({
    header: { at: r.at, seq: r.seq, childId: r.childId, ok: r.ok, ...(r.ok ? { childRunId: r.childRunId, close: r.close } : {}) },
    payload: r.ok ? EMPTY : p.error(r.error),
  }),
  decode: (h, p) => ({
    kind: "child",
    at: h.at,
    seq: h.seq,
    childId: h.childId,
    ok: h.ok,
    ...(h.ok ? { childRunId: h.childRunId, close: h.close } : { error: p.error() }),
  }),
};

const childResult: RecordKindDescriptor<"child-result", ChildResultHeader> = {
  code: 14,
  indexed: true,
  wakes: true,
  readsBack: never,
  describe: (r) => `result of child '${r.childId}'`,
  encode: (r, p) => ({ header: { at: r.at, seq: r.seq, childId: r.childId, status: r.status }, payload: outcome(r.status === "ok", r, p) }),
  decode: (h, p) => ({
    kind: "child-result",
    at: h.at,
    seq: h.seq,
    childId: h.childId,
    status: h.status,
    ...(h.status === "ok" ? { value: p.value() } : { error: p.error() }),
  }),
};

const cancel: RecordKindDescriptor<"cancel", CancelHeader> = {
  code: 15,
  indexed: false,
  wakes: true,
  readsBack: always,
  describe: () => `cancellation`,
  encode: (r, p) => ({ header: { at: r.at, ...request(r) }, payload: p.value(r.reason) }),
  decode: (h, p) => ({ kind: "cancel", at: h.at, reason: p.value() as string, ...request(h) }),
};

const attempt: RecordKindDescriptor<"attempt", AttemptHeader> = {
  code: 16,
  indexed: false,
  wakes: false,
  readsBack: never,
  describe: (r) => `failed attempt ${r.attempt} of step '${r.name}' (call #${r.seq})`,
  encode: (r, p) => ({
    header: {
      at: r.at,
      seq: r.seq,
      name: r.name,
      attempt: r.attempt,
      retryAt: r.retryAt,
      ...(r.since === undefined ? {} : { since: r.since }),
    },
    payload: p.error(r.error),
  }),
  decode: (h, p) => ({
    kind: "attempt",
    at: h.at,
    seq: h.seq,
    name: h.name,
    attempt: h.attempt,
    retryAt: h.retryAt,
    error: p.error(),
    ...(h.since === undefined ? {} : { since: h.since }),
  }),
};

const stopped: RecordKindDescriptor<"stopped", StoppedHeader> = {
  code: 17,
  indexed: true,
  wakes: false,
  readsBack: always,
  describe: (r) => `stop (${r.code})`,
  encode: (r) => ({ header: { at: r.at, code: r.code, message: r.message }, payload: EMPTY }),
  decode: (h) => ({ kind: "stopped", at: h.at, code: h.code, message: h.message }),
};

const resumed: RecordKindDescriptor<"resumed", ResumedHeader> = {
  code: 18,
  indexed: true,
  wakes: false,
  readsBack: always,
  describe: () => "resumption",
  encode: (r) => ({ header: { at: r.at }, payload: EMPTY }),
  decode: (h) => ({ kind: "resumed", at: h.at }),
};

/** The descriptor of every record kind. */
export const RECORD_KINDS: { readonly [K in RecordKind]: RecordKindDescriptor<K> } = {
  start,
  step,
  signal,
  update,
  "update-result": updateResult,
  timer,
  fired,
  patch,
  attributes,
  finish,
  heartbeat,
  completion,
  child,
  "child-result": childResult,
  cancel,
  attempt,
  stopped,
  resumed,
};

/** The descriptor of `kind`, typed for any record (the table is indexed by a record's own kind). */
export function kindOf(kind: RecordKind): RecordKindDescriptor<RecordKind, Header> {
  return RECORD_KINDS[kind] as unknown as RecordKindDescriptor<RecordKind, Header>;
}

/** Record kinds by their code, for every byte value (undefined where no kind has the code). */
export const KINDS_BY_CODE: readonly (RecordKind | undefined)[] = Array.from({ length: 256 }, (_, code) =>
  (Object.keys(RECORD_KINDS) as RecordKind[]).find((kind) => RECORD_KINDS[kind].code === code),
);

/** Records that answer a numbered call of the workflow code (`step`, `timer`, `patch`, `attributes`, `child`). */
export function isCallRecord(r: JournalRecord): r is CallRecord {
  return kindOf(r.kind).call !== undefined;
}

/** The name replay checks a call of the code against: a step's name, a patch's ID, a child's ID. */
export function callName(r: CallRecord): string | undefined {
  return kindOf(r.kind).call?.(r);
}

/** A short human description of a record, for error messages: `step 'charge' (call #2)`. */
export function describeRecord(r: JournalRecord): string {
  return kindOf(r.kind).describe(r);
}

/** Record kinds whose headers the engine's index reads when it opens the log; the rest are only counted. */
export const INDEXED_KINDS: ReadonlySet<RecordKind> = new Set(
  (Object.keys(RECORD_KINDS) as RecordKind[]).filter((k) => RECORD_KINDS[k].indexed),
);

/** True when `record`, once durable, wakes a parked run to apply it. */
export function wakesRun(record: JournalRecord): boolean {
  return kindOf(record.kind).wakes;
}

/** True when decoding `record` would give back equal values of the same types (no objects, no errors). */
export function readsBackUnchanged(record: JournalRecord): boolean {
  return kindOf(record.kind).readsBack(record);
}
