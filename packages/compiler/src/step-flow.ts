import { ts } from "ts-morph";
import { ExpressionText } from "./argument-text.js";
import { CallReader, type ExpressionReader } from "./flow-calls.js";
import type { FlowContext } from "./flow-context.js";
import { LoopReader, type StatementReader } from "./flow-loops.js";
import {
  canonical,
  endsClause,
  type Exit,
  flat,
  type Fork,
  type ForkArm,
  forkEnv,
  GIVE_UP,
  isFork,
  isShortCircuit,
  prune,
  type Seq,
  text,
  unwrapNegation,
  type Where,
} from "./flow-shapes.js";
import type { FlowNode, SourceLocation } from "./ir.js";
import { Env, Evaluator, symbolic, writtenSymbols } from "./known-values.js";

/**
 * Reads the order in which a method body calls steps, following the static code paths: statements
 * in order, arguments before the call they feed, arms of branches side by side. Values gen can
 * compute from literals are followed as the code runs (a loop counter, a constant list), so a loop
 * over them is read as its iterations and a branch on them as the arm taken; other loops, and
 * callbacks handed to other calls (`map`, `forEach`), are read as loops that run any number of times.
 * The function given to `ctx.step` is the step itself and is not read.
 */
export class FlowReader implements StatementReader, ExpressionReader {
  readonly evaluator: Evaluator;
  readonly texts: ExpressionText;
  private readonly loops: LoopReader;
  private readonly calls: CallReader;

  constructor(private readonly context: FlowContext) {
    this.evaluator = new Evaluator(context.checker);
    this.calls = new CallReader(context, this);
    this.texts = new ExpressionText(
      context.checker,
      this.evaluator,
      (call) => this.calls.helperBodyOf(call),
      (call) => this.calls.patchedId(call),
      (call) => this.calls.stepNameOf(call),
    );
    this.loops = new LoopReader(this);
  }

  /** The pruned step tree of a method or function body. */
  read(body: ts.ConciseBody | undefined, env: Env = Env.empty()): FlowNode[] {
    if (body === undefined) return [];
    return prune(this.body(body, env).nodes);
  }

  body(body: ts.ConciseBody, env: Env): Seq {
    if (!ts.isBlock(body)) return { nodes: this.node(body, env), exits: false };
    this.hoist(body.statements, env);
    const seq = this.statements(body.statements, 0, env, {});
    return { nodes: seq.nodes, exits: false };
  }

  /** Function declarations of a block are known from its start. */
  private hoist(statements: readonly ts.Statement[], env: Env): void {
    for (const s of statements)
      if (ts.isFunctionDeclaration(s) && s.name !== undefined && s.body !== undefined)
        env.set(this.evaluator.symbolOf(s.name), { kind: "function", node: s });
  }

  /**
   * A statement list. When an arm of a branch ends in `return`, `throw`, `break` or `continue`, the
   * statements after the branch run only on the other arms, so they are moved into those arms:
   * `if (!ctx.patched(id)) { old; return; } new` reads as a patch whose patched arm is `new`.
   */
  private statements(statements: readonly ts.Statement[], from: number, env: Env, where: Where): Seq {
    const out: FlowNode[] = [];
    for (let i = from; i < statements.length; i++) {
      const read = this.statement(statements[i] as ts.Statement, env, where);
      if (isFork(read)) {
        const going = read.arms.filter((arm) => arm.exits === false);
        if (going.length < read.arms.length) {
          // Read one iteration at a time, a loop cannot leave on a condition gen cannot decide.
          if (where.loop === "unrolled") throw GIVE_UP;
          if (going.length > 0) env.assign(Env.merge(going.map((arm) => arm.env)));
          const rest = going.length === 0 ? { nodes: [], exits: false as Exit } : this.statements(statements, i + 1, env, where);
          const arms = read.arms.map((arm) =>
            arm.exits === false ? [...arm.nodes, ...rest.nodes] : [...arm.nodes, ...this.exitNode(arm.exits, where, read.at)],
          );
          const exits = going.length === 0 ? (read.arms[0]?.exits ?? false) : rest.exits;
          return { nodes: [...out, ...read.before, read.build(arms)], exits };
        }
        env.assign(forkEnv(read));
        out.push(...read.before, read.build(read.arms.map((arm) => arm.nodes)));
      } else {
        out.push(...read.nodes);
        if (read.exits !== false) return { nodes: out, exits: read.exits };
      }
    }
    return { nodes: out, exits: false };
  }

  /** The node that records an exit from a loop gen reads as a loop, where the tree must keep it. */
  private exitNode(exit: Exit, where: Where, at: SourceLocation): FlowNode[] {
    if (exit === false || where.loop !== "generic") return [];
    return [{ kind: "exit", how: exit, at }];
  }

  private statement(s: ts.Statement, env: Env, where: Where): Seq | Fork {
    const at = () => this.context.locate(s);
    if (ts.isBlock(s)) {
      this.hoist(s.statements, env);
      return this.statements(s.statements, 0, env, where);
    }
    if (ts.isReturnStatement(s)) return { nodes: s.expression === undefined ? [] : this.node(s.expression, env), exits: "return" };
    if (ts.isThrowStatement(s)) return { nodes: this.node(s.expression, env), exits: "return" };
    if (ts.isBreakStatement(s)) return { nodes: [], exits: where.inSwitch === true && s.label === undefined ? false : "break" };
    if (ts.isContinueStatement(s)) return { nodes: [], exits: "continue" };
    if (ts.isIfStatement(s)) {
      return this.choice(
        s.expression,
        (e) => this.statementSeq(s.thenStatement, e, where),
        (e) => (s.elseStatement === undefined ? { nodes: [], exits: false } : this.statementSeq(s.elseStatement, e, where)),
        at(),
        env,
      );
    }
    if (ts.isSwitchStatement(s)) return this.switchStatement(s, env, where, at());
    if (ts.isForStatement(s) || ts.isForOfStatement(s) || ts.isForInStatement(s) || ts.isWhileStatement(s) || ts.isDoStatement(s))
      return this.loop(s, env, where, at());
    if (ts.isTryStatement(s)) {
      const caughtEnv = env.clone();
      caughtEnv.forget(writtenSymbols(s.tryBlock, (n) => this.evaluator.symbolOf(n)));
      const body = this.statements(s.tryBlock.statements, 0, env, where);
      // Without a catch clause, a throw leaves the try the way its body's throw does.
      const caught = s.catchClause === undefined ? body : this.statements(s.catchClause.block.statements, 0, caughtEnv, where);
      // The two ways out of the block differ: one iteration of a counted loop cannot tell which is taken.
      const split = body.exits !== caught.exits;
      if (split && where.loop === "unrolled") throw GIVE_UP;
      env.assign(Env.merge([env, caughtEnv]));
      const final =
        s.finallyBlock === undefined ? { nodes: [], exits: false as Exit } : this.statements(s.finallyBlock.statements, 0, env, where);
      const marked = (seq: Seq) => (split ? [...seq.nodes, ...this.exitNode(seq.exits, where, at())] : seq.nodes);
      return {
        nodes: [
          { kind: "try", at: at(), body: marked(body), catch: s.catchClause === undefined ? [] : marked(caught), finally: final.nodes },
        ],
        exits: final.exits !== false ? final.exits : split ? false : body.exits,
      };
    }
    if (ts.isLabeledStatement(s)) return this.statement(s.statement, env, where);
    if (ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s)) return flat([]);
    if (ts.isVariableStatement(s)) return flat(this.declarations(s.declarationList, env));
    const nodes = this.children(s, env);
    this.applyWrites(s, env);
    return flat(nodes);
  }

  statementSeq(s: ts.Statement, env: Env, where: Where): Seq {
    return this.settle(this.statement(s, env, where), env, where);
  }

  /** A fork read on its own (an arm of an `if`, an expression): arms side by side, nothing after it to move in. */
  private settle(read: Seq | Fork, env: Env, where: Where): Seq {
    if (!isFork(read)) return read;
    const going = read.arms.filter((arm) => arm.exits === false);
    if (going.length > 0 && going.length < read.arms.length && where.loop === "unrolled") throw GIVE_UP;
    env.assign(going.length === read.arms.length ? forkEnv(read) : Env.merge((going.length > 0 ? going : read.arms).map((arm) => arm.env)));
    const exits = going.length === 0 ? (read.arms[0]?.exits ?? false) : false;
    const arms = read.arms.map((arm) => [...arm.nodes, ...(going.length === 0 ? [] : this.exitNode(arm.exits, where, read.at))]);
    return { nodes: [...read.before, read.build(arms)], exits };
  }

  /** `let`/`const` declarations: their initializers' calls, and what gen now knows of the names. */
  declarations(list: ts.VariableDeclarationList, env: Env): FlowNode[] {
    const out: FlowNode[] = [];
    for (const d of list.declarations) {
      const init = d.initializer;
      if (init !== undefined && ts.isIdentifier(d.name) && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) {
        env.set(this.evaluator.symbolOf(d.name), { kind: "function", node: init });
        continue;
      }
      if (init !== undefined) out.push(...this.node(init, env));
      if (ts.isIdentifier(d.name)) env.set(this.evaluator.symbolOf(d.name), this.known(init, env));
      else env.forget(writtenSymbols(d.name, (n) => this.evaluator.symbolOf(n)));
    }
    return out;
  }

  /** What gen knows of a variable set to `e`: its value, or how it is computed. */
  private known(e: ts.Expression | undefined, env: Env) {
    if (e === undefined) return { kind: "value" as const, value: undefined };
    const v = this.evaluator.value(e, env);
    return v.known ? { kind: "value" as const, value: v.value } : symbolic(this.texts.value(e, env));
  }

  /** A `for` loop's initializer or incrementor, as an expression statement would be. */
  applyIncrement(e: ts.Expression, env: Env): void {
    this.applyWrites(e, env, e);
  }

  /** What an expression statement writes: `i++`, `i += 1`, `x = 3` keep a known value; other writes forget it. */
  private applyWrites(s: ts.Node, env: Env, expression?: ts.Expression): void {
    const symbolOf = (n: ts.Node) => this.evaluator.symbolOf(n);
    const updates: [ts.Symbol | undefined, ReturnType<FlowReader["known"]>][] = [];
    const e = expression ?? (ts.isExpressionStatement(s) ? s.expression : undefined);
    if (e !== undefined) {
      const number = (target: ts.Expression, delta: number) => {
        const v = this.evaluator.value(target, env);
        return v.known && typeof v.value === "number" ? { kind: "value" as const, value: v.value + delta } : undefined;
      };
      if (ts.isBinaryExpression(e) && ts.isIdentifier(e.left)) {
        const op = e.operatorToken.kind;
        if (op === ts.SyntaxKind.EqualsToken) updates.push([symbolOf(e.left), this.known(e.right, env)]);
        else if (op === ts.SyntaxKind.PlusEqualsToken || op === ts.SyntaxKind.MinusEqualsToken) {
          const by = this.evaluator.value(e.right, env);
          const sign = op === ts.SyntaxKind.PlusEqualsToken ? 1 : -1;
          updates.push([symbolOf(e.left), by.known && typeof by.value === "number" ? number(e.left, sign * by.value) : undefined]);
        }
      } else if ((ts.isPostfixUnaryExpression(e) || ts.isPrefixUnaryExpression(e)) && ts.isIdentifier(e.operand)) {
        if (e.operator === ts.SyntaxKind.PlusPlusToken) updates.push([symbolOf(e.operand), number(e.operand, 1)]);
        if (e.operator === ts.SyntaxKind.MinusMinusToken) updates.push([symbolOf(e.operand), number(e.operand, -1)]);
      }
    }
    env.forget(writtenSymbols(s, symbolOf));
    for (const [symbol, v] of updates) env.set(symbol, v);
  }

  private switchStatement(s: ts.SwitchStatement, env: Env, where: Where, location: SourceLocation): Seq | Fork {
    const clauses = s.caseBlock.clauses;
    // A clause falls through into the next until one ends in break, return, throw or continue.
    const armOf = (i: number): ts.Statement[] => {
      const arm: ts.Statement[] = [];
      for (const clause of clauses.slice(i)) {
        arm.push(...clause.statements);
        const last = clause.statements[clause.statements.length - 1];
        if (last !== undefined && endsClause(last)) break;
      }
      return arm;
    };
    const inner: Where = { ...where, inSwitch: true };
    const before = this.node(s.expression, env);
    const subject = this.evaluator.value(s.expression, env);
    const labels = clauses.map((c) => (ts.isDefaultClause(c) ? undefined : this.evaluator.value(c.expression, env)));
    if (subject.known && labels.every((l) => l === undefined || l.known)) {
      let taken = labels.findIndex((l) => l?.known === true && l.value === subject.value);
      if (taken < 0) taken = clauses.findIndex(ts.isDefaultClause);
      if (taken < 0) return flat(before);
      const read = this.statements(armOf(taken), 0, env, inner);
      return { nodes: [...before, ...read.nodes], exits: read.exits };
    }
    const arms: ForkArm[] = clauses.map((_, i) => {
      const armEnv = env.clone();
      return { ...this.statements(armOf(i), 0, armEnv, inner), env: armEnv };
    });
    const cases = clauses.map((c) => (ts.isDefaultClause(c) ? "default" : text(c.expression)));
    if (!clauses.some(ts.isDefaultClause)) {
      arms.push({ nodes: [], exits: false, env: env.clone() });
      cases.push("default");
    }
    const subjectText = text(s.expression);
    return { before, arms, at: location, build: (folded) => ({ kind: "branch", at: location, arms: folded, switch: subjectText, cases }) };
  }

  /** A loop: its iterations one by one when gen can count them, else a loop node run any number of times. */
  private loop(s: ts.IterationStatement, env: Env, where: Where, at: SourceLocation): Seq {
    return this.loops.read(s, env, where, at);
  }

  /** Any node that is not a statement handled above: expressions in evaluation order. */
  node(n: ts.Node, env: Env): FlowNode[] {
    if (ts.isCallExpression(n)) return this.calls.call(n, env);
    if (ts.isArrowFunction(n) || ts.isFunctionExpression(n)) return this.callback(n, env);
    if (ts.isClassExpression(n) || ts.isFunctionDeclaration(n)) return [];
    if (ts.isConditionalExpression(n)) {
      const read = this.choice(
        n.condition,
        (e) => flat(this.node(n.whenTrue, e)),
        (e) => flat(this.node(n.whenFalse, e)),
        this.context.locate(n),
        env,
      );
      return this.settle(read, env, {}).nodes;
    }
    if (ts.isBinaryExpression(n) && isShortCircuit(n.operatorToken.kind)) {
      // `a && f()` runs f when a holds, `a || f()` when it does not, `a ?? f()` when a is nullish.
      const kind = n.operatorToken.kind;
      const left = this.node(n.left, env);
      const value = this.evaluator.value(n.left, env);
      const nullish = kind === ts.SyntaxKind.QuestionQuestionToken || kind === ts.SyntaxKind.QuestionQuestionEqualsToken;
      const and = kind === ts.SyntaxKind.AmpersandAmpersandToken || kind === ts.SyntaxKind.AmpersandAmpersandEqualsToken;
      if (value.known) {
        const runsRight = nullish ? value.value === null || value.value === undefined : and ? Boolean(value.value) : !value.value;
        return [...left, ...(runsRight ? this.node(n.right, env) : [])];
      }
      const when = canonical(n.left, (x) => this.texts.condition(x, env));
      const runsWhenFalse = !nullish && !and !== when.negated;
      const rightEnv = env.clone();
      const right = this.node(n.right, rightEnv);
      env.assign(Env.merge([env, rightEnv]));
      return [
        ...left,
        {
          kind: "branch",
          at: this.context.locate(n),
          arms: runsWhenFalse ? [[], right] : [right, []],
          when: nullish ? `${when.negated ? "!" : ""}${when.text} == null` : when.text,
          ...(runsWhenFalse ? { swapped: true } : {}),
        },
      ];
    }
    return this.children(n, env);
  }

  private children(n: ts.Node, env: Env): FlowNode[] {
    const out: FlowNode[] = [];
    ts.forEachChild(n, (child) => {
      if (ts.isTypeNode(child)) return;
      out.push(...(ts.isStatement(child) ? this.statementSeq(child, env, {}).nodes : this.node(child, env)));
    });
    return out;
  }

  /** A function handed to another call: its body, run any number of times. */
  callback(fn: ts.ArrowFunction | ts.FunctionExpression | ts.FunctionDeclaration, env: Env): FlowNode[] {
    const inner = env.clone();
    inner.forget(writtenSymbols(fn, (n) => this.evaluator.symbolOf(n)));
    return [{ kind: "loop", at: this.context.locate(fn), body: this.read(fn.body, inner) }];
  }

  /**
   * A branch on `condition`: only the arm taken when gen can compute the condition, else both arms,
   * each read with what is known on it. A `ctx.patched(id)` condition makes a patch branch.
   */
  private choice(
    condition: ts.Expression,
    whenTrue: (env: Env) => Seq,
    whenFalse: (env: Env) => Seq,
    at: SourceLocation,
    env: Env,
  ): Seq | Fork {
    const guard = this.patchGuard(condition);
    const before = guard === undefined ? this.node(condition, env) : [];
    const value = guard === undefined ? this.evaluator.value(condition, env) : { known: false as const };
    if (value.known) {
      const taken = (value.value ? whenTrue : whenFalse)(env);
      return { nodes: [...before, ...taken.nodes], exits: taken.exits };
    }
    const trueEnv = env.clone();
    const falseEnv = env.clone();
    const yes = { ...whenTrue(trueEnv), env: trueEnv };
    const no = { ...whenFalse(falseEnv), env: falseEnv };
    if (guard !== undefined) {
      const [patched, unpatched] = guard.negated ? [no, yes] : [yes, no];
      return {
        before: [],
        arms: [patched, unpatched],
        at,
        condition: `ctx.patched(${JSON.stringify(guard.id)})`,
        build: ([then = [], otherwise = []]) => ({ kind: "patch", id: guard.id, at, then, else: otherwise }),
      };
    }
    const when = canonical(condition, (x) => this.texts.condition(x, env));
    return {
      before,
      arms: [yes, no],
      at,
      condition: when.negated ? `!(${when.text})` : when.text,
      build: ([t = [], f = []]) => ({
        kind: "branch",
        at,
        arms: when.negated ? [f, t] : [t, f],
        when: when.text,
        ...(when.negated ? { swapped: true } : {}),
      }),
    };
  }

  /** `ctx.patched("id")`, possibly negated or parenthesized, as a branch condition. */
  private patchGuard(condition: ts.Expression): { id: string; negated: boolean } | undefined {
    const { expression: e, negated } = unwrapNegation(condition);
    if (!ts.isCallExpression(e)) return undefined;
    const id = this.calls.patchedId(e);
    return id === undefined ? undefined : { id, negated };
  }
}
