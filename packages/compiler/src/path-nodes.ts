import type { CallKind, FlowNode, SourceLocation } from "./ir.js";
import type { LockNode } from "./lock.js";

/** A path element read from either side (the lock or the code), with the location when it comes from code. */
export type Node =
  | {
      readonly kind: "step";
      readonly key: string;
      readonly name: string;
      /** The arguments as replay compares them (see `FlowNode`). */
      readonly args?: string;
      /** The arguments' source text, which earlier locks recorded. */
      readonly argsText?: string;
      readonly at?: SourceLocation;
    }
  | {
      readonly kind: "call";
      readonly call: CallKind;
      readonly name: string;
      readonly at?: SourceLocation;
    }
  | { readonly kind: "wait"; readonly on: string; readonly signals?: readonly string[]; readonly at?: SourceLocation }
  | {
      readonly kind: "patch";
      readonly id: string;
      readonly then: readonly Node[];
      readonly else: readonly Node[];
      readonly at?: SourceLocation;
    }
  | { readonly kind: "deprecated"; readonly id: string; readonly at?: SourceLocation }
  | {
      readonly kind: "branch";
      readonly arms: readonly (readonly Node[])[];
      readonly when?: string;
      readonly switch?: string;
      readonly cases?: readonly string[];
      readonly at?: SourceLocation;
    }
  | {
      readonly kind: "loop";
      readonly body: readonly Node[];
      readonly over?: string;
      /** How many times the body runs, when known: read from a counted `for` header of an earlier lock. */
      readonly count?: number;
      /** It runs at least once on every path. */
      readonly entered?: boolean;
      readonly at?: SourceLocation;
    }
  | {
      readonly kind: "try";
      readonly body: readonly Node[];
      readonly catch: readonly Node[];
      readonly finally: readonly Node[];
      readonly at?: SourceLocation;
    }
  | { readonly kind: "exit"; readonly how: "break" | "continue" | "return"; readonly at?: SourceLocation };

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
    case "branch":
      return node.arms.flatMap((arm) => arm.flatMap(leaves));
    case "loop":
      return node.body.flatMap(leaves);
    case "try":
      return [...node.body, ...node.catch, ...node.finally].flatMap(leaves);
    default:
      return [];
  }
}

/** Every node of a tree, depth first. */
export function allNodes(nodes: readonly Node[]): Node[] {
  const out: Node[] = [];
  const visit = (n: Node): void => {
    out.push(n);
    if (n.kind === "patch") [...n.then, ...n.else].forEach(visit);
    else if (n.kind === "branch") n.arms.flat().forEach(visit);
    else if (n.kind === "loop") n.body.forEach(visit);
    else if (n.kind === "try") [...n.body, ...n.catch, ...n.finally].forEach(visit);
  };
  nodes.forEach(visit);
  return out;
}

/** What a loop whose iterations are not known is told apart by: its header, or for a callback what it calls. */
export function loopKey(node: Extract<Node, { kind: "loop" }>): string {
  return node.over ?? `callback calling ${leaves(node).map(leafName).join(", ")}`;
}

/** What a try statement is told apart by: the calls of its body. */
export function tryKey(node: Extract<Node, { kind: "try" }>): string {
  return `try calling ${node.body.flatMap(leaves).map(leafName).join(", ")}`;
}

function stepName(key: string): string {
  return key.replace(/#\d+$/, "");
}

export function fromLock(node: LockNode): Node {
  if (typeof node === "string") return { kind: "step", key: node, name: stepName(node) };
  if ("step" in node) return { kind: "step", key: node.step, name: stepName(node.step), args: node.args };
  if ("call" in node) return { kind: "call", call: node.call, name: "id" in node ? node.id : "" };
  if ("wait" in node) return { kind: "wait", on: node.wait, ...(node.signals === undefined ? {} : { signals: node.signals }) };
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
  if ("loop" in node) {
    const count = node.over === undefined ? undefined : countedHeader(node.over);
    return {
      kind: "loop",
      body: node.loop.map(fromLock),
      ...(node.over === undefined ? {} : { over: node.over }),
      ...(count === undefined ? {} : { count }),
      ...(node.entered === true ? { entered: true } : {}),
    };
  }
  if ("exit" in node) return { kind: "exit", how: node.exit };
  return { kind: "try", body: node.try.map(fromLock), catch: node.catch.map(fromLock), finally: node.finally.map(fromLock) };
}

/**
 * The iterations of a `for` header an earlier lock recorded (`let i = 0; i < 3; i++`), when it
 * counts from one integer to another by one; the code now reads such loops as their iterations.
 */
function countedHeader(over: string): number | undefined {
  const m = /^(?:let|var) (\w+) = (-?\d+); (?:(\w+) (<|<=) (-?\d+)|(-?\d+) (>|>=) (\w+)); (?:(\w+)\+\+|\+\+(\w+)|(\w+) \+= 1)$/.exec(over);
  if (m === null) return undefined;
  const name = m[1];
  const from = Number(m[2]);
  const variable = m[3] ?? m[8];
  const inclusive = (m[4] ?? m[7]) === "<=" || (m[4] ?? m[7]) === ">=";
  const to = Number(m[5] ?? m[6]);
  const stepped = m[9] ?? m[10] ?? m[11];
  if (variable !== name || stepped !== name) return undefined;
  return Math.max(0, to - from + (inclusive ? 1 : 0));
}

/**
 * A path read from the code. `stepsOnly` drops what locks of version 1 did not record (other
 * journaled calls, waits, conditions, loop headers, arguments), so such a lock is compared like for like.
 */
export function fromFlow(node: FlowNode, stepsOnly = false): Node[] {
  const map = (nodes: readonly FlowNode[]): Node[] => nodes.flatMap((n) => fromFlow(n, stepsOnly));
  switch (node.kind) {
    case "step":
      return [
        {
          kind: "step",
          key: node.key,
          name: stepName(node.key),
          at: node.at,
          ...(stepsOnly || node.args === undefined || node.args === "" ? {} : { args: node.args }),
          ...(stepsOnly || node.argsText === undefined || node.argsText === "" ? {} : { argsText: node.argsText }),
        },
      ];
    case "call":
      return stepsOnly ? [] : [{ kind: "call", call: node.call, name: node.name ?? "", at: node.at }];
    case "wait":
      return stepsOnly
        ? []
        : [{ kind: "wait", on: node.on, at: node.at, ...(node.signals === undefined ? {} : { signals: node.signals }) }];
    case "patch":
      return [{ kind: "patch", id: node.id, then: map(node.then), else: map(node.else), at: node.at }];
    case "deprecatedPatch":
      return [{ kind: "deprecated", id: node.id, at: node.at }];
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
      return [
        {
          kind: "loop",
          body: map(node.body),
          at: node.at,
          ...(stepsOnly || node.over === undefined ? {} : { over: node.over }),
          ...(stepsOnly || node.entered !== true ? {} : { entered: true }),
        },
      ];
    case "try":
      return [{ kind: "try", body: map(node.body), catch: map(node.catch), finally: map(node.finally), at: node.at }];
    case "exit":
      return [{ kind: "exit", how: node.how, at: node.at }];
  }
}
