import type { FlowNode, SourceLocation } from "./ir.js";
import type { LockNode } from "./lock.js";

/** A path element read from either side (the lock or the code), with the location when it comes from code. */
export type Node =
  | { readonly kind: "step"; readonly key: string; readonly name: string; readonly args?: string; readonly at?: SourceLocation }
  | { readonly kind: "call"; readonly call: "timer" | "wait-timer" | "child" | "attributes"; readonly name: string; readonly at?: SourceLocation }
  | { readonly kind: "wait"; readonly on: string; readonly at?: SourceLocation }
  | { readonly kind: "patch"; readonly id: string; readonly then: readonly Node[]; readonly else: readonly Node[]; readonly at?: SourceLocation }
  | { readonly kind: "deprecated"; readonly id: string }
  | {
      readonly kind: "branch";
      readonly arms: readonly (readonly Node[])[];
      readonly when?: string;
      readonly switch?: string;
      readonly cases?: readonly string[];
      readonly at?: SourceLocation;
    }
  | { readonly kind: "loop"; readonly body: readonly Node[]; readonly over?: string; readonly at?: SourceLocation }
  | { readonly kind: "try"; readonly body: readonly Node[]; readonly catch: readonly Node[]; readonly finally: readonly Node[]; readonly at?: SourceLocation };

/** A leaf of a path: a journaled call (a step or another) or a wait. */
export type Leaf = Extract<Node, { kind: "step" | "call" | "wait" }>;

/** The name a leaf is matched by: a step's name, `timer`, `child:<id>`, `attributes`, `wait:<on>`. */
export function leafName(leaf: Leaf): string {
  if (leaf.kind === "step") return leaf.name;
  if (leaf.kind === "wait") return `wait:${leaf.on}`;
  // A wait's timeout journals the same timer record as a sleep.
  if (leaf.call === "wait-timer") return "timer";
  return leaf.call === "child" ? `child:${leaf.name}` : leaf.call;
}

/** A leaf in words, for messages. */
export function describeLeaf(leaf: Leaf): string {
  if (leaf.kind === "step") return `step "${leaf.name}"`;
  if (leaf.kind === "wait") return `a wait for ${leaf.on}`;
  if (leaf.call === "timer") return "a durable timer (ctx.sleep)";
  if (leaf.call === "wait-timer") return "the timeout of a wait (a timer journaled when the wait does wait)";
  if (leaf.call === "child") return `child workflow "${leaf.name}"`;
  return "ctx.setAttributes()";
}

export function signature(node: Node): string {
  switch (node.kind) {
    case "step":
    case "call":
    case "wait":
      return `${node.kind}:${leafName(node)}`;
    case "patch":
      return `p:${node.id}`;
    case "deprecated":
      return `d:${node.id}`;
    case "branch":
      return "b";
    case "loop":
      return "l";
    case "try":
      return "t";
  }
}

/** Every leaf of a node, arms and bodies included. */
export function leaves(node: Node | undefined): Leaf[] {
  if (node === undefined) return [];
  switch (node.kind) {
    case "step":
    case "call":
    case "wait":
      return [node];
    case "patch":
      return [...node.then.flatMap(leaves), ...node.else.flatMap(leaves)];
    case "deprecated":
      return [];
    case "branch":
      return node.arms.flatMap((arm) => arm.flatMap(leaves));
    case "loop":
      return node.body.flatMap(leaves);
    case "try":
      return [...node.body, ...node.catch, ...node.finally].flatMap(leaves);
  }
}

/** Whether the node journals anything: a step, a timer, a child, attributes or a patch marker. */
export function records(node: Node): boolean {
  return node.kind === "patch" || leaves(node).some((l) => l.kind !== "wait");
}

/** Whether a run can stop in this node and stay in flight: a wait, a timer, or anything holding one. */
export function canWait(node: Node): boolean {
  if (node.kind === "patch") return [...node.then, ...node.else].some(canWait);
  return leaves(node).some((l) => l.kind === "wait" || (l.kind === "call" && (l.call === "timer" || l.call === "wait-timer")));
}

export function locationOf(node: Node | undefined): SourceLocation | undefined {
  if (node === undefined || node.kind === "deprecated") return undefined;
  return node.at ?? leaves(node).find((s) => s.at !== undefined)?.at;
}

function stepName(key: string): string {
  return key.replace(/#\d+$/, "");
}

export function fromLock(node: LockNode): Node {
  if (typeof node === "string") return { kind: "step", key: node, name: stepName(node) };
  if ("step" in node) return { kind: "step", key: node.step, name: stepName(node.step), args: node.args };
  if ("call" in node) return { kind: "call", call: node.call, name: "id" in node ? node.id : "" };
  if ("wait" in node) return { kind: "wait", on: node.wait };
  if ("patch" in node) return { kind: "patch", id: node.patch, then: node.then.map(fromLock), else: node.else.map(fromLock) };
  if ("deprecatedPatch" in node) return { kind: "deprecated", id: node.deprecatedPatch };
  if ("branch" in node) {
    return {
      kind: "branch",
      arms: node.branch.map((arm) => arm.map(fromLock)),
      ...(node.if === undefined ? {} : { when: node.if }),
      ...(node.switch === undefined || node.cases === undefined ? {} : { switch: node.switch, cases: node.cases }),
    };
  }
  if ("loop" in node) return { kind: "loop", body: node.loop.map(fromLock), ...(node.over === undefined ? {} : { over: node.over }) };
  return { kind: "try", body: node.try.map(fromLock), catch: node.catch.map(fromLock), finally: node.finally.map(fromLock) };
}

/**
 * A path read from the code. `stepsOnly` drops what locks of version 1 did not record (other
 * journaled calls, waits, conditions, loop headers, arguments), so such a lock is compared like for like.
 */
export function fromFlow(node: FlowNode, stepsOnly = false): Node[] {
  const map = (nodes: readonly FlowNode[]): Node[] => nodes.flatMap((n) => fromFlow(n, stepsOnly));
  switch (node.kind) {
    case "step":
      return [{ kind: "step", key: node.key, name: stepName(node.key), at: node.at, ...(stepsOnly || node.args === undefined || node.args === "" ? {} : { args: node.args }) }];
    case "call":
      return stepsOnly ? [] : [{ kind: "call", call: node.call, name: node.name ?? "", at: node.at }];
    case "wait":
      return stepsOnly ? [] : [{ kind: "wait", on: node.on, at: node.at }];
    case "patch":
      return [{ kind: "patch", id: node.id, then: map(node.then), else: map(node.else), at: node.at }];
    case "deprecatedPatch":
      return [{ kind: "deprecated", id: node.id }];
    case "branch":
      return [
        {
          kind: "branch",
          // Locks of version 1 kept the arms in source order.
          arms: stepsOnly && node.swapped === true ? [...node.arms].reverse().map(map) : node.arms.map(map),
          at: node.at,
          ...(stepsOnly || node.when === undefined ? {} : { when: node.when }),
          ...(stepsOnly || node.switch === undefined || node.cases === undefined ? {} : { switch: node.switch, cases: node.cases }),
        },
      ];
    case "loop":
      return [{ kind: "loop", body: map(node.body), at: node.at, ...(stepsOnly || node.over === undefined ? {} : { over: node.over }) }];
    case "try":
      return [{ kind: "try", body: map(node.body), catch: map(node.catch), finally: map(node.finally), at: node.at }];
  }
}

/** Index pairs of a longest common subsequence, in order. */
export function align(a: readonly string[], b: readonly string[]): [number, number][] {
  const n = a.length;
  const m = b.length;
  const table: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    const row = table[i] as number[];
    const below = table[i + 1] as number[];
    for (let j = m - 1; j >= 0; j--) {
      row[j] = a[i] === b[j] ? (below[j + 1] as number) + 1 : Math.max(below[j] as number, row[j + 1] as number);
    }
  }
  const pairs: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      pairs.push([i, j]);
      i++;
      j++;
    } else if ((table[i + 1]?.[j] ?? 0) >= (table[i]?.[j + 1] ?? 0)) i++;
    else j++;
  }
  return pairs;
}

const MAX_CONDITIONS = 8;

/**
 * Whether two sequences make the same journaled calls, in the same order, on every path: each
 * assignment of truth values to the branch conditions of both sides (by their normalized text)
 * leads to the same calls. This is what replay needs, whatever shape the branches have, so hoisting
 * a common call out of the arms or swapping the arms of a negated condition is no change.
 */
export function samePaths(a: readonly Node[], b: readonly Node[]): boolean {
  const all = [...a, ...b];
  const conditions = [...new Set(all.flatMap(conditionsOf))];
  // A switch takes one of the cases either side names, or none of them.
  const subjects = new Map<string, string[]>();
  for (const s of all.flatMap(switchesOf)) subjects.set(s.subject, [...new Set([...(subjects.get(s.subject) ?? []), ...s.cases.filter((c) => c !== "default")])]);
  const domains = [...subjects].map(([subject, cases]) => ({ subject, values: [...cases, "\u0000other"] }));
  let combinations = 2 ** conditions.length;
  for (const d of domains) combinations *= d.values.length;
  if (conditions.length > MAX_CONDITIONS || combinations > MAX_PATHS) return false;
  for (let n = 0; n < combinations; n++) {
    let rest = n;
    const mask = rest % 2 ** conditions.length;
    rest = Math.floor(rest / 2 ** conditions.length);
    const values = new Map<string, string>();
    for (const d of domains) {
      values.set(d.subject, d.values[rest % d.values.length] as string);
      rest = Math.floor(rest / d.values.length);
    }
    const choice: Choice = { holds: (c) => (mask & (1 << conditions.indexOf(c))) !== 0, value: (s) => values.get(s) ?? "\u0000other" };
    if (walk(a, choice).join("\n") !== walk(b, choice).join("\n")) return false;
  }
  return true;
}

const MAX_PATHS = 4096;

interface Choice {
  holds(condition: string): boolean;
  value(subject: string): string;
}

function children(node: Node): readonly Node[] {
  return node.kind === "branch" ? node.arms.flat() : [];
}

function conditionsOf(node: Node): string[] {
  const inner = children(node).flatMap(conditionsOf);
  if (node.kind !== "branch" || node.when === undefined || node.arms.length !== 2) return inner;
  return [node.when, ...inner];
}

function switchesOf(node: Node): { subject: string; cases: readonly string[] }[] {
  const inner = children(node).flatMap(switchesOf);
  if (node.kind !== "branch" || node.switch === undefined || node.cases === undefined) return inner;
  return [{ subject: node.switch, cases: node.cases }, ...inner];
}

/** The calls one choice of the conditions makes; what is not a branch with a known condition stands for itself. */
function walk(nodes: readonly Node[], choice: Choice): string[] {
  const out: string[] = [];
  for (const node of nodes) {
    if (node.kind === "branch" && node.when !== undefined && node.arms.length === 2) {
      out.push(...walk((choice.holds(node.when) ? node.arms[0] : node.arms[1]) ?? [], choice));
    } else if (node.kind === "branch" && node.switch !== undefined && node.cases !== undefined) {
      const value = choice.value(node.switch);
      const arm = node.cases.indexOf(value) >= 0 ? node.cases.indexOf(value) : node.cases.indexOf("default");
      out.push(...walk(node.arms[arm] ?? [], choice));
    } else if (node.kind === "step") out.push(`${signature(node)}(${node.args ?? ""})`);
    else out.push(JSON.stringify(strip(node)));
  }
  return out;
}

/** A node without locations, for comparing whole subtrees. */
function strip(node: Node): unknown {
  return JSON.parse(JSON.stringify(node, (key, value: unknown) => (key === "at" || key === "key" ? undefined : value)));
}
