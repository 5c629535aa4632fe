import { argumentsOnPath } from "./argument-paths.js";
import { evaluate, formulaOf } from "./condition-formula.js";
import { type Leaf, loopKey, type Node, tryKey } from "./path-nodes.js";

/**
 * One way a run can go through the code: the truth of each branch condition, the case a `switch`
 * takes, how often each loop runs that gen could not count, whether a try block throws, and, for
 * code that had them, whether the run took each `ctx.patched(id)`.
 */
export interface Choice {
  holds(atom: string): boolean;
  /** The case text a `switch` on `subject` takes, or {@link NO_CASE}. */
  value(subject: string): string;
  count(loop: string): number;
  throws(tryBlock: string): boolean;
  patched(id: string): boolean;
}

/** A `switch` value none of the cases written names. */
export const NO_CASE = "\u0000other";

/** What a run does on one path, in order: a journaled call, a patch record, or a wait that journals nothing. */
export type PathEvent =
  | { readonly kind: "record"; readonly leaf: Extract<Leaf, { kind: "step" | "call" }> }
  | { readonly kind: "marker"; readonly id: string; readonly at?: Node["at"] }
  | { readonly kind: "wait"; readonly leaf: Extract<Leaf, { kind: "wait" }> };

/**
 * How `ctx.patched(id)` answers as the walk reaches it. The recorded code answers from the choice
 * and journals a marker when true; code replaying a journal answers from the journal, which the
 * caller consumes itself. `deprecated` for `ctx.deprecatePatch(id)`, whose answer nothing reads.
 */
export type PatchAnswer = (id: string, deprecated: boolean) => { readonly taken: boolean; readonly marker: boolean };

/** How a sequence ended: it ran to its end, or it left a loop or the whole entry point. */
type Exit = "break" | "continue" | "return" | undefined;

/** Loops gen could not count run at most this often in any choice; a few iterations show every difference. */
export const MAX_ITERATIONS = 2;

/**
 * The events of a path, in order, lazily: a caller matching them against a journal stops at the
 * first difference, and answers patch calls from what the journal holds at that point.
 */
export function* walk(nodes: readonly Node[], choice: Choice, answer: PatchAnswer): Generator<PathEvent, void, undefined> {
  const answers = new Map<string, boolean>();
  yield* sequence(nodes, choice, answer, answers);
}

function* sequence(
  nodes: readonly Node[],
  choice: Choice,
  answer: PatchAnswer,
  answers: Map<string, boolean>,
): Generator<PathEvent, Exit, undefined> {
  for (const node of nodes) {
    const exit = yield* one(node, choice, answer, answers);
    if (exit !== undefined) return exit;
  }
  return undefined;
}

function* one(node: Node, choice: Choice, answer: PatchAnswer, answers: Map<string, boolean>): Generator<PathEvent, Exit, undefined> {
  switch (node.kind) {
    case "step": {
      const args =
        node.args === undefined
          ? undefined
          : argumentsOnPath(
              node.args,
              (a) => choice.holds(a),
              (id) => answers.get(id) ?? false,
            );
      yield { kind: "record", leaf: args === node.args ? node : { ...node, ...(args === undefined ? {} : { args }) } };
      return undefined;
    }
    case "call":
      yield { kind: "record", leaf: node };
      return undefined;
    case "wait":
      yield { kind: "wait", leaf: node };
      return undefined;
    case "patch": {
      const { taken, marker } = answer(node.id, false);
      answers.set(node.id, taken);
      if (marker) yield { kind: "marker", id: node.id, ...(node.at === undefined ? {} : { at: node.at }) };
      return yield* sequence(taken ? node.then : node.else, choice, answer, answers);
    }
    case "deprecated": {
      const { marker } = answer(node.id, true);
      if (marker) yield { kind: "marker", id: node.id, ...(node.at === undefined ? {} : { at: node.at }) };
      return undefined;
    }
    case "branch": {
      if (node.when !== undefined && node.arms.length === 2) {
        const holds = evaluate(
          formulaOf(node.when),
          (a) => choice.holds(a),
          (id) => answers.get(id) ?? false,
        );
        return yield* sequence((holds ? node.arms[0] : node.arms[1]) ?? [], choice, answer, answers);
      }
      if (node.switch !== undefined && node.cases !== undefined) {
        const value = choice.value(node.switch);
        const arm = node.cases.indexOf(value) >= 0 ? node.cases.indexOf(value) : node.cases.indexOf("default");
        return arm < 0 ? undefined : yield* sequence(node.arms[arm] ?? [], choice, answer, answers);
      }
      // A branch of unknown form: its first arm, on every path alike.
      return yield* sequence(node.arms[0] ?? [], choice, answer, answers);
    }
    case "loop": {
      const times = node.count ?? choice.count(loopKey(node));
      for (let i = 0; i < times; i++) {
        const exit = yield* sequence(node.body, choice, answer, answers);
        if (exit === "break") break;
        if (exit === "return") return exit;
      }
      return undefined;
    }
    case "try": {
      let exit = yield* sequence(node.body, choice, answer, answers);
      if (choice.throws(tryKey(node))) exit = yield* sequence(node.catch, choice, answer, answers);
      const after = yield* sequence(node.finally, choice, answer, answers);
      return after ?? exit;
    }
    case "exit":
      return node.how;
  }
}
