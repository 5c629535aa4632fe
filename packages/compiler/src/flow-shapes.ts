import { ts } from "ts-morph";
import type { FlowNode, SourceLocation } from "./ir.js";
import { Env } from "./known-values.js";

/** The pieces the flow reader assembles step trees from, and how it reads conditions. */

/** How a statement list ended: it ran through, or it returned (or threw), or it left or restarted its loop. */
export type Exit = false | "return" | "break" | "continue";

/** Where statements are being read: in a loop gen reads as such, in one iteration of a loop it counts, or elsewhere. */
export interface Where {
  readonly loop?: "generic" | "unrolled";
  /** A `break` here ends a `switch` clause, not the loop. */
  readonly inSwitch?: boolean;
}

/** Nodes read from statements, and how they end. */
export interface Seq {
  readonly nodes: FlowNode[];
  readonly exits: Exit;
}

/** Iterations of a loop gen reads out one by one, at most. */
export const MAX_UNROLLED = 16;

/** Thrown to give up reading a loop iteration by iteration (a `break` under a condition gen cannot decide). */
export const GIVE_UP = Symbol("give up unrolling");

/** A function or method declared in the project's own source, whose body gen can read. */
export function isProjectFunction(declaration: ts.Declaration): boolean {
  const file = declaration.getSourceFile();
  if (file.isDeclarationFile || /[\\/]node_modules[\\/]/.test(file.fileName)) return false;
  if (ts.isFunctionDeclaration(declaration) || ts.isMethodDeclaration(declaration)) return true;
  return (
    ts.isVariableDeclaration(declaration) &&
    declaration.initializer !== undefined &&
    (ts.isArrowFunction(declaration.initializer) || ts.isFunctionExpression(declaration.initializer))
  );
}

/** Source text with runs of white space made one space. */
export function text(node: ts.Node): string {
  return node.getText().replace(/\s+/g, " ").trim();
}

/**
 * A branch condition as compared across versions: parentheses and negations peeled, and comparisons
 * written one way (`a > b` as `b < a`, `a !== b` as the negation of `a === b`), so that negating a
 * condition and swapping the arms reads as the same branch.
 */
export function canonical(condition: ts.Expression, textOf: (node: ts.Node) => string = text): { text: string; negated: boolean } {
  const { expression: e, negated } = unwrapNegation(condition);
  if (ts.isBinaryExpression(e)) {
    const l = textOf(e.left);
    const r = textOf(e.right);
    switch (e.operatorToken.kind) {
      case ts.SyntaxKind.ExclamationEqualsEqualsToken:
        return { text: `${l} === ${r}`, negated: !negated };
      case ts.SyntaxKind.ExclamationEqualsToken:
        return { text: `${l} == ${r}`, negated: !negated };
      case ts.SyntaxKind.GreaterThanToken:
        return { text: `${r} < ${l}`, negated };
      case ts.SyntaxKind.GreaterThanEqualsToken:
        return { text: `${l} < ${r}`, negated: !negated };
      case ts.SyntaxKind.LessThanEqualsToken:
        return { text: `${r} < ${l}`, negated: !negated };
      default:
        break;
    }
  }
  return { text: textOf(e), negated };
}

/** One arm of a fork, with what is known at its end. */
export interface ForkArm extends Seq {
  readonly env: Env;
}

/** A branching statement whose arms are not yet assembled, so the statements after it can move into arms that go on. */
export interface Fork {
  /** Nodes evaluated before the branch: its condition. */
  readonly before: FlowNode[];
  readonly arms: readonly ForkArm[];
  readonly at: SourceLocation;
  /** For a two-armed fork, the condition under which the first arm runs. */
  readonly condition?: string;
  build(arms: FlowNode[][]): FlowNode;
}

/** What is known after a fork whose arms all go on: for two arms on a condition, variables they set apart become its conditional. */
export function forkEnv(read: Fork): Env {
  const [yes, no] = read.arms;
  if (read.condition !== undefined && yes !== undefined && no !== undefined && read.arms.length === 2)
    return Env.mergeFork(yes.env, no.env, read.condition);
  return Env.merge(read.arms.map((arm) => arm.env));
}

export function isFork(read: Seq | Fork): read is Fork {
  return "arms" in read;
}

export function flat(nodes: FlowNode[]): Seq {
  return { nodes, exits: false };
}

/** Drops the branches, loops and try blocks that hold no step, no patch marker and no exit. */
export function prune(nodes: readonly FlowNode[]): FlowNode[] {
  const out: FlowNode[] = [];
  for (const node of nodes) {
    switch (node.kind) {
      case "step":
      case "call":
      case "wait":
      case "deprecatedPatch":
      case "exit":
        out.push(node);
        break;
      case "patch":
        out.push({ ...node, then: prune(node.then), else: prune(node.else) });
        break;
      case "branch": {
        const arms = node.arms.map(prune);
        if (arms.some((a) => a.length > 0)) out.push({ ...node, arms });
        break;
      }
      case "loop": {
        const body = prune(node.body);
        if (body.some((n) => n.kind !== "exit")) out.push({ ...node, body });
        break;
      }
      case "try": {
        const body = prune(node.body);
        const caught = prune(node.catch);
        const final = prune(node.finally);
        if (caught.length === 0 && final.length === 0) out.push(...body);
        else out.push({ ...node, body, catch: caught, finally: final });
        break;
      }
    }
  }
  return out;
}

export function helperBody(declaration: ts.Declaration): ts.ConciseBody | undefined {
  if (ts.isMethodDeclaration(declaration) || ts.isFunctionDeclaration(declaration) || ts.isGetAccessorDeclaration(declaration))
    return declaration.body;
  if ((ts.isVariableDeclaration(declaration) || ts.isPropertyDeclaration(declaration)) && declaration.initializer !== undefined) {
    const init = declaration.initializer;
    if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) return init.body;
  }
  return undefined;
}

export function endsClause(s: ts.Statement): boolean {
  return ts.isBreakStatement(s) || ts.isReturnStatement(s) || ts.isThrowStatement(s) || ts.isContinueStatement(s);
}

export function isShortCircuit(kind: ts.SyntaxKind): boolean {
  return (
    kind === ts.SyntaxKind.AmpersandAmpersandToken ||
    kind === ts.SyntaxKind.BarBarToken ||
    kind === ts.SyntaxKind.QuestionQuestionToken ||
    kind === ts.SyntaxKind.AmpersandAmpersandEqualsToken ||
    kind === ts.SyntaxKind.BarBarEqualsToken ||
    kind === ts.SyntaxKind.QuestionQuestionEqualsToken
  );
}

/** A condition without its parentheses and `!`s, and whether an odd number of `!`s negated it. */
export function unwrapNegation(condition: ts.Expression): { expression: ts.Expression; negated: boolean } {
  let expression = condition;
  let negated = false;
  for (;;) {
    if (ts.isParenthesizedExpression(expression)) expression = expression.expression;
    else if (ts.isPrefixUnaryExpression(expression) && expression.operator === ts.SyntaxKind.ExclamationToken) {
      negated = !negated;
      expression = expression.operand;
    } else return { expression, negated };
  }
}
