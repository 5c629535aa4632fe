import { existsSync, readFileSync } from "node:fs";
import { LockFileError } from "./errors.js";
import type { CallKind, FlowNode, HandlerIR, ParamIR, ProjectIR, StepIR, TypeRef, WorkflowIR } from "./ir.js";
import { compare } from "./text-order.js";

/**
 * fusee.lock.json: what runs started under the recorded code expect of it. Deterministic (keys
 * sorted, no timestamps, no line numbers), so it changes only when the workflows' contract does.
 */
export interface Lock {
  /** {@link LOCK_VERSION}; locks of version 1 recorded steps and patch markers only, and are still read. */
  readonly version: 1 | typeof LOCK_VERSION;
  /** By workflow type name. */
  readonly workflows: Readonly<Record<string, LockWorkflow>>;
}

export const LOCK_VERSION = 2;

export interface LockWorkflow {
  readonly class: string;
  readonly file: string;
  readonly input: LockType | null;
  readonly output: LockType;
  /** Patch IDs declared in `@Workflow({ patches })`. */
  readonly patches: readonly string[];
  /** By step key (the step name, or `name#2`, ... for inline steps of one name with other types). */
  readonly steps: Readonly<Record<string, LockSignature>>;
  readonly signals: Readonly<Record<string, LockSignature>>;
  readonly queries: Readonly<Record<string, LockSignature>>;
  readonly updates: Readonly<Record<string, LockSignature>>;
  /** The step order of each entry point: `run`, `update:<name>`, `signal:<name>`. */
  readonly paths: Readonly<Record<string, readonly LockNode[]>>;
  /** The values of the enums the workflow names (absent when it names none), so a shift of recorded values shows. */
  readonly enums?: Readonly<Record<string, Readonly<Record<string, number | string>>>>;
}

/** A type as written, or as written plus its expanded structure when the two differ. */
export type LockType = string | { readonly type: string; readonly shape: string };

export interface LockSignature {
  readonly args: readonly LockType[];
  readonly result: LockType;
}

/**
 * One element of a recorded path: a step key (with the source text of its arguments when it has
 * any), another journaled call (a timer, a child, search attributes), a wait without a journaled
 * call, a `ctx.patched(id)` branch, a `ctx.deprecatePatch(id)` marker, the arms of a branch with
 * its condition, a loop body with its header, a try statement, or the `break`, `continue` or `return`
 * that leaves a loop gen could not count.
 */
export type LockNode =
  | string
  | { readonly step: string; readonly args: string }
  | { readonly call: Exclude<CallKind, "child"> }
  | { readonly call: "child"; readonly id: string }
  | { readonly wait: string; readonly signals?: readonly string[] }
  | { readonly patch: string; readonly then: readonly LockNode[]; readonly else: readonly LockNode[] }
  | { readonly deprecatedPatch: string }
  | {
      readonly branch: readonly (readonly LockNode[])[];
      readonly if?: string;
      readonly switch?: string;
      readonly cases?: readonly string[];
    }
  | { readonly loop: readonly LockNode[]; readonly over?: string; readonly entered?: true }
  | { readonly try: readonly LockNode[]; readonly catch: readonly LockNode[]; readonly finally: readonly LockNode[] }
  | { readonly exit: "break" | "continue" | "return" };

/** The lock entry of every workflow in the project. */
export function buildLock(ir: ProjectIR): Lock {
  const workflows: Record<string, LockWorkflow> = {};
  for (const w of [...ir.workflows].sort((a, b) => compare(a.typeName, b.typeName))) workflows[w.typeName] = lockWorkflow(w);
  return { version: LOCK_VERSION, workflows };
}

const lockEntries = new WeakMap<WorkflowIR, LockWorkflow>();
const entryTexts = new WeakMap<LockWorkflow, string>();

/** The lock entry of one workflow; the same intermediate form always yields the same entry object. */
function lockWorkflow(w: WorkflowIR): LockWorkflow {
  let entry = lockEntries.get(w);
  if (entry === undefined) {
    entry = buildEntry(w);
    lockEntries.set(w, entry);
  }
  return entry;
}

/** A lock entry as JSON text, computed once per entry object; equal texts mean equal entries. */
export function entryText(entry: LockWorkflow): string {
  let text = entryTexts.get(entry);
  if (text === undefined) {
    text = JSON.stringify(entry);
    entryTexts.set(entry, text);
  }
  return text;
}

function buildEntry(w: WorkflowIR): LockWorkflow {
  const paths: Record<string, readonly LockNode[]> = {};
  for (const flow of [...w.flows].sort((a, b) => compareEntries(a.entry, b.entry))) paths[flow.entry] = flow.nodes.map(lockNode);
  return {
    class: w.className,
    file: w.at.file,
    input: w.input === undefined ? null : lockType(w.input.type),
    output: lockType(w.output),
    patches: w.patches.map((p) => p.id),
    steps: record(w.steps, (s) => s.key, stepSignature),
    signals: record(w.signals, (h) => h.name, handlerSignature),
    queries: record(w.queries, (h) => h.name, handlerSignature),
    updates: record(w.updates, (h) => h.name, handlerSignature),
    paths,
    ...(Object.keys(w.enums).length === 0 ? {} : { enums: w.enums }),
  };
}

/** Serializes a lock the way it is stored: two-space JSON and a final newline. */
export function formatLock(lock: Lock): string {
  return `${JSON.stringify(lock, null, 2)}\n`;
}

/** Reads the lock file, or undefined when there is none yet. */
export function readLock(path: string): Lock | undefined {
  return existsSync(path) ? parseLock(path, readFileSync(path, "utf8")) : undefined;
}

/** Parses the text of a lock file; `path` is for messages. */
export function parseLock(path: string, text: string): Lock {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new LockFileError(
      `${path} is not valid JSON (${(e as Error).message}). Fix: restore it from version control; regenerating it loses what runs in flight expect.`,
      { cause: e },
    );
  }
  const lock = parsed as Partial<Lock> | null;
  if (
    lock === null ||
    typeof lock !== "object" ||
    (lock.version !== LOCK_VERSION && lock.version !== 1) ||
    typeof lock.workflows !== "object" ||
    lock.workflows === null
  ) {
    throw new LockFileError(
      `${path} is not a version ${LOCK_VERSION} fusee lock. Fix: restore it from version control, or upgrade fusee to the version that wrote it.`,
    );
  }
  for (const [name, w] of Object.entries(lock.workflows)) {
    if (typeof w !== "object" || w === null || typeof w.paths !== "object" || typeof w.steps !== "object" || !Array.isArray(w.patches)) {
      throw new LockFileError(`${path}: the entry of workflow ${name} is malformed. Fix: restore it from version control.`);
    }
  }
  return lock as Lock;
}

/** The spelling of a recorded type, for messages. */
export function typeText(type: LockType): string {
  return typeof type === "string" ? type : type.type;
}

/** The structure of a recorded type, for compatibility checks. */
export function typeShape(type: LockType): string {
  return typeof type === "string" ? type : type.shape;
}

function lockType(type: TypeRef): LockType {
  return type.display === type.shape ? type.display : { type: type.display, shape: type.shape };
}

function lockNode(node: FlowNode): LockNode {
  switch (node.kind) {
    case "step":
      return node.args === undefined || node.args === "" ? node.key : { step: node.key, args: node.args };
    case "call":
      return node.call === "child" ? { call: "child", id: node.name ?? "" } : { call: node.call };
    case "wait":
      return node.signals === undefined || node.signals.length === 0 ? { wait: node.on } : { wait: node.on, signals: node.signals };
    case "patch":
      return { patch: node.id, then: node.then.map(lockNode), else: node.else.map(lockNode) };
    case "deprecatedPatch":
      return { deprecatedPatch: node.id };
    case "branch":
      return {
        branch: node.arms.map((arm) => arm.map(lockNode)),
        ...(node.when === undefined ? {} : { if: node.when }),
        ...(node.switch === undefined || node.cases === undefined ? {} : { switch: node.switch, cases: node.cases }),
      };
    case "loop":
      return {
        loop: node.body.map(lockNode),
        ...(node.over === undefined ? {} : { over: node.over }),
        ...(node.entered === true ? { entered: true as const } : {}),
      };
    case "try":
      return { try: node.body.map(lockNode), catch: node.catch.map(lockNode), finally: node.finally.map(lockNode) };
    case "exit":
      return { exit: node.how };
  }
}

function stepSignature(step: StepIR): LockSignature {
  return { args: step.args.map(paramType), result: lockType(step.result) };
}

function handlerSignature(handler: HandlerIR): LockSignature {
  return { args: handler.params.map(paramType), result: lockType(handler.result) };
}

function paramType(param: ParamIR): LockType {
  const type = lockType(param.type);
  if (!param.optional && !param.rest) return type;
  const mark = (s: string) => (param.rest ? `...${s}` : `${s}?`);
  return typeof type === "string" ? mark(type) : { type: mark(type.type), shape: mark(type.shape) };
}

function record<T, V>(items: readonly T[], key: (item: T) => string, value: (item: T) => V): Record<string, V> {
  const out: Record<string, V> = {};
  for (const item of [...items].sort((a, b) => compare(key(a), key(b)))) out[key(item)] = value(item);
  return out;
}

/** `run` first, then the handlers by name. */
function compareEntries(a: string, b: string): number {
  if (a === b) return 0;
  if (a === "run") return -1;
  if (b === "run") return 1;
  return compare(a, b);
}
