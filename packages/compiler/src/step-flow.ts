import { ts } from "ts-morph";
import { ExpressionText } from "./argument-text.js";
import { durableCall, dynamicName, handsOverContext, MESSAGE_STEPS } from "./durable-calls.js";
import type { FlowNode, SourceLocation } from "./ir.js";
import { Env, Evaluator, type LocalFunction, symbolic, writtenSymbols } from "./known-values.js";
import type { RuntimeSymbols } from "./runtime-symbols.js";
import { resultUse } from "./result-use.js";

/** What the flow reader needs to know about the workflow class it walks. */
export interface FlowContext {
  readonly checker: ts.TypeChecker;
  readonly runtime: RuntimeSymbols;
  locate(node: ts.Node): SourceLocation;
  /** The step key of a `@Step` method (in the class or a base class), or undefined for any other declaration. */
  stepKeyOf(declaration: ts.Declaration): string | undefined;
  /**
   * The declaration whose body a call of `declaration` runs, when gen should follow it: a method of
   * the workflow class or of a base class or mixin (the override nearest the class), or undefined.
   */
  helperOf(declaration: ts.Declaration): ts.Declaration | undefined;
  /** Registers an inline `ctx.step(name, fn)` call and returns its step key. */
  inlineStep(call: ts.CallExpression, name: string): string;
  /** The literal text of a name argument (`"early"`, a constant, a template), or undefined. */
  literal(expression: ts.Expression | undefined): string | undefined;
  /** Reports a call whose journaled calls cannot be read statically; gen refuses until the code changes. */
  unresolved(node: ts.Node, message: string): void;
  /** The names of the signals whose handlers assign one of these fields of the class. */
  signalsSetting(fields: ReadonlySet<string>): string[];
  /** The getter or method of the class of that name, whose body a condition may read. */
  memberBody(name: string): ts.Node | undefined;
  /** How one call of a step uses its result. */
  resultUsed(stepKey: string, use: { readonly converted: boolean; readonly asserted: readonly string[] }): void;
}

/** How a statement list ended: it ran through, or it returned (or threw), or it left or restarted its loop. */
type Exit = false | "return" | "break" | "continue";

/** Where statements are being read: in a loop gen reads as such, in one iteration of a loop it counts, or elsewhere. */
interface Where {
  readonly loop?: "generic" | "unrolled";
  /** A `break` here ends a `switch` clause, not the loop. */
  readonly inSwitch?: boolean;
}

/** Nodes read from statements, and how they end. */
interface Seq {
  readonly nodes: FlowNode[];
  readonly exits: Exit;
}

/** Iterations of a loop gen reads out one by one, at most. */
const MAX_UNROLLED = 16;

/** Thrown to give up reading a loop iteration by iteration (a `break` under a condition gen cannot decide). */
const GIVE_UP = Symbol("give up unrolling");

/**
 * Reads the order in which a method body calls steps, following the static code paths: statements
 * in order, arguments before the call they feed, arms of branches side by side. Values gen can
 * compute from literals are followed as the code runs (a loop counter, a constant list), so a loop
 * over them is read as its iterations and a branch on them as the arm taken; other loops, and
 * callbacks handed to other calls (`map`, `forEach`), are read as loops that run any number of times.
 * The function given to `ctx.step` is the step itself and is not read.
 */
export class FlowReader {
  private readonly following = new Set<ts.Node>();
  private readonly evaluator: Evaluator;
  private readonly texts: ExpressionText;

  constructor(private readonly context: FlowContext) {
    this.evaluator = new Evaluator(context.checker);
    this.texts = new ExpressionText(
      context.checker,
      this.evaluator,
      (call) => this.helperBodyOf(call),
      (call) => this.patchedId(call),
      (call) => this.stepNameOf(call),
    );
  }

  /** The pruned step tree of a method or function body. */
  read(body: ts.ConciseBody | undefined, env: Env = Env.empty()): FlowNode[] {
    if (body === undefined) return [];
    return prune(this.body(body, env).nodes);
  }

  private body(body: ts.ConciseBody, env: Env): Seq {
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

  private statementSeq(s: ts.Statement, env: Env, where: Where): Seq {
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
  private declarations(list: ts.VariableDeclarationList, env: Env): FlowNode[] {
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
  private applyIncrement(e: ts.Expression, env: Env): void {
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
    const attempt = env.clone();
    try {
      const unrolled = this.unroll(s, attempt);
      if (unrolled !== undefined) {
        env.assign(attempt);
        return unrolled;
      }
    } catch (e) {
      if (e !== GIVE_UP) throw e;
    }
    return this.genericLoop(s, env, at);
  }

  private unroll(s: ts.IterationStatement, env: Env): Seq | undefined {
    const out: FlowNode[] = [];
    const iteration: Where = { loop: "unrolled" };
    const run = (): "again" | "stop" | Seq => {
      const body = this.statementSeq(s.statement, env, iteration);
      out.push(...body.nodes);
      if (body.exits === "break") return "stop";
      if (body.exits === "return") return { nodes: out, exits: "return" };
      return "again";
    };
    const holds = (condition: ts.Expression | undefined): boolean | undefined => {
      if (condition === undefined) return true;
      const v = this.evaluator.value(condition, env);
      return v.known ? Boolean(v.value) : undefined;
    };
    if (ts.isForOfStatement(s)) {
      const items = this.evaluator.value(s.expression, env);
      if (!items.known || !Array.isArray(items.value) || items.value.length > MAX_UNROLLED) return undefined;
      const declaration = ts.isVariableDeclarationList(s.initializer) ? s.initializer.declarations[0] : undefined;
      if (declaration === undefined || !ts.isIdentifier(declaration.name)) return undefined;
      const symbol = this.evaluator.symbolOf(declaration.name);
      out.push(...this.node(s.expression, env));
      for (const item of items.value as readonly unknown[]) {
        env.set(symbol, { kind: "value", value: item as never });
        const r = run();
        if (r === "stop") break;
        if (r !== "again") return r;
      }
      return { nodes: out, exits: false };
    }
    if (ts.isForInStatement(s)) return undefined;
    if (ts.isForStatement(s) && s.initializer !== undefined) {
      if (ts.isVariableDeclarationList(s.initializer)) out.push(...this.declarations(s.initializer, env));
      else {
        out.push(...this.node(s.initializer, env));
        this.applyIncrement(s.initializer, env);
      }
    }
    const condition = ts.isForStatement(s) ? s.condition : (s as ts.WhileStatement | ts.DoStatement).expression;
    // Only a loop whose condition reads nothing its body leaves unknown can be counted.
    for (let i = 0; i <= MAX_UNROLLED; i++) {
      if (!ts.isDoStatement(s) || i > 0) {
        const h = holds(condition);
        if (h === undefined) return undefined;
        if (!h) return { nodes: out, exits: false };
      }
      if (i === MAX_UNROLLED) return undefined;
      const r = run();
      if (r === "stop") return { nodes: out, exits: false };
      if (r !== "again") return r;
      if (ts.isForStatement(s) && s.incrementor !== undefined) this.applyIncrement(s.incrementor, env);
    }
    return undefined;
  }

  private genericLoop(s: ts.IterationStatement, env: Env, at: SourceLocation): Seq {
    const generic: Where = { loop: "generic" };
    const forget = () => env.forget(writtenSymbols(s, (n) => this.evaluator.symbolOf(n)));
    // Whether the condition holds before the first iteration, on every path: such a loop runs at least once.
    const enters = (condition: ts.Expression | undefined) => {
      const v = condition === undefined ? { known: true, value: true } : this.evaluator.value(condition, env);
      return v.known && Boolean(v.value) ? { entered: true } : {};
    };
    if (ts.isForStatement(s)) {
      const init =
        s.initializer === undefined
          ? []
          : ts.isVariableDeclarationList(s.initializer)
            ? this.declarations(s.initializer, env)
            : this.node(s.initializer, env);
      const entered = enters(s.condition);
      forget();
      const condition = s.condition === undefined ? [] : this.node(s.condition, env);
      const step = s.incrementor === undefined ? [] : this.node(s.incrementor, env);
      const over = [s.initializer, s.condition, s.incrementor].map((e) => (e === undefined ? "" : text(e))).join("; ");
      const body = this.statementSeq(s.statement, env.clone(), generic);
      return flat([...init, ...condition, { kind: "loop", at, body: [...body.nodes, ...step, ...condition], over, ...entered }]);
    }
    const entered = ts.isWhileStatement(s) ? enters(s.expression) : {};
    forget();
    if (ts.isForOfStatement(s) || ts.isForInStatement(s)) {
      const over = `${text(s.initializer)} ${ts.isForOfStatement(s) ? "of" : "in"} ${text(s.expression)}`;
      const items = this.node(s.expression, env);
      return flat([...items, { kind: "loop", at, body: this.statementSeq(s.statement, env.clone(), generic).nodes, over }]);
    }
    const expression = (s as ts.WhileStatement | ts.DoStatement).expression;
    const condition = this.node(expression, env);
    if (ts.isWhileStatement(s)) {
      return flat([
        ...condition,
        {
          kind: "loop",
          at,
          body: [...this.statementSeq(s.statement, env.clone(), generic).nodes, ...condition],
          over: text(expression),
          ...entered,
        },
      ]);
    }
    const once = [...this.statementSeq(s.statement, env.clone(), generic).nodes, ...condition];
    return flat([...once, { kind: "loop", at, body: once, over: text(expression) }]);
  }

  /** Any node that is not a statement handled above: expressions in evaluation order. */
  private node(n: ts.Node, env: Env): FlowNode[] {
    if (ts.isCallExpression(n)) return this.call(n, env);
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
  private callback(fn: ts.ArrowFunction | ts.FunctionExpression | ts.FunctionDeclaration, env: Env): FlowNode[] {
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
    const id = this.patchedId(e);
    return id === undefined ? undefined : { id, negated };
  }

  private patchedId(call: ts.CallExpression): string | undefined {
    const callee = call.expression;
    if (
      !(ts.isPropertyAccessExpression(callee) || ts.isElementAccessExpression(callee)) ||
      this.context.runtime.memberAt(callee) !== "Ctx.patched"
    )
      return undefined;
    return this.context.literal(call.arguments[0]);
  }

  private call(call: ts.CallExpression, env: Env): FlowNode[] {
    const at = this.context.locate(call);
    const callee = call.expression;
    const member =
      ts.isPropertyAccessExpression(callee) || ts.isElementAccessExpression(callee) ? this.context.runtime.memberAt(callee) : undefined;
    if (member === "Ctx.step") {
      const name = this.context.literal(call.arguments[0]) ?? dynamicName(call.arguments[0]);
      const key = this.context.inlineStep(call, name);
      this.context.resultUsed(key, resultUse(call, this.context.checker));
      return [{ kind: "step", key, at }];
    }
    // A message to another workflow is journaled as a step of the sender, under the method's name.
    const message = member === undefined ? undefined : MESSAGE_STEPS.get(member);
    if (message !== undefined)
      return [...call.arguments.flatMap((a) => this.node(a, env)), { kind: "step", key: this.context.inlineStep(call, message), at }];
    if (member === "Ctx.patched") {
      const id = this.context.literal(call.arguments[0]);
      return id === undefined ? [] : [{ kind: "patch", id, at, then: [], else: [] }];
    }
    if (member === "Ctx.deprecatePatch") {
      const id = this.context.literal(call.arguments[0]);
      return id === undefined ? [] : [{ kind: "deprecatedPatch", id, at }];
    }
    const iterated = this.iteration(call, env);
    if (iterated !== undefined) return iterated;
    const before = [...this.node(callee, env), ...call.arguments.flatMap((a) => this.argument(a, env))];
    const durable = member === undefined ? undefined : durableCall(member, call, at, this.context, (p) => this.waitSignals(p));
    if (durable !== undefined) return [...before, ...durable];
    const local = this.localFunction(callee, env);
    if (local !== undefined) return [...before, ...this.inline(local.node, call, env)];
    const declaration = this.declarationOf(callee);
    if (declaration === undefined) return before;
    const stepKey = this.context.stepKeyOf(declaration);
    if (stepKey !== undefined) {
      this.context.resultUsed(stepKey, resultUse(call, this.context.checker));
      return [
        ...before,
        { kind: "step", key: stepKey, at, args: this.texts.arguments(call.arguments, env), argsText: call.arguments.map(text).join(", ") },
      ];
    }
    const followed =
      this.context.helperOf(declaration) ??
      (handsOverContext(call, this.context) && isProjectFunction(declaration) ? declaration : undefined);
    if (
      followed === undefined &&
      handsOverContext(call, this.context) &&
      !this.context.runtime.isRuntimeFile(declaration.getSourceFile())
    ) {
      this.context.unresolved(
        call,
        `${text(callee)}() is handed the workflow's ctx, but fusee gen cannot read its body (it is declared in ${declaration.getSourceFile().isDeclarationFile ? "a declaration file" : "a form gen does not follow"}), so the durable calls it makes are unknown. Fix: make the calls in the workflow class or in a function declared in this project's source, or pass what it needs instead of ctx.`,
      );
      return before;
    }
    if (followed === undefined || this.following.has(followed)) return before;
    const body = helperBody(followed);
    if (body === undefined) {
      if (handsOverContext(call, this.context))
        this.context.unresolved(
          call,
          `${text(callee)}() is handed the workflow's ctx but has no body gen can read, so the durable calls it makes are unknown. Fix: call a function with a body, declared in this project's source.`,
        );
      return before;
    }
    this.following.add(followed);
    try {
      return [...before, ...this.body(body, this.bind(followed, call, env)).nodes];
    } finally {
      this.following.delete(followed);
    }
  }

  /** An argument: a function handed over runs any number of times, unless it is `.then()`'s, which runs once. */
  private argument(a: ts.Expression, env: Env): FlowNode[] {
    const parent = a.parent;
    const once =
      ts.isCallExpression(parent) &&
      ts.isPropertyAccessExpression(parent.expression) &&
      ["then", "finally"].includes(parent.expression.name.text);
    const fn = ts.isArrowFunction(a) || ts.isFunctionExpression(a) ? a : this.localFunction(a, env)?.node;
    if (fn !== undefined && once && fn.body !== undefined) {
      // `.then((v) => ...)` runs once with `v` the awaited value of what it is called on.
      const inner = env.clone();
      const first = fn.parameters[0];
      if (first !== undefined && ts.isIdentifier(first.name) && ts.isPropertyAccessExpression(parent.expression))
        inner.set(this.evaluator.symbolOf(first.name), { kind: "awaited", node: parent.expression.expression });
      return this.body(fn.body, inner).nodes;
    }
    if (fn !== undefined) return this.callback(fn, env);
    return this.node(a, env);
  }

  /** `list.map(fn)`, `list.forEach(fn)` over a list gen knows: `fn` once per element, in order. */
  private iteration(call: ts.CallExpression, env: Env): FlowNode[] | undefined {
    const callee = call.expression;
    if (!ts.isPropertyAccessExpression(callee) || !["map", "forEach", "flatMap"].includes(callee.name.text)) return undefined;
    const fnArg = call.arguments[0];
    const fn =
      fnArg === undefined
        ? undefined
        : ts.isArrowFunction(fnArg) || ts.isFunctionExpression(fnArg)
          ? fnArg
          : this.localFunction(fnArg, env)?.node;
    const items = this.evaluator.value(callee.expression, env);
    if (fn === undefined || fn.body === undefined || !items.known || !Array.isArray(items.value) || items.value.length > MAX_UNROLLED)
      return undefined;
    const out = this.node(callee.expression, env);
    (items.value as readonly unknown[]).forEach((item, index) => {
      const inner = env.clone();
      const [first, second] = fn.parameters;
      if (first !== undefined && ts.isIdentifier(first.name))
        inner.set(this.evaluator.symbolOf(first.name), { kind: "value", value: item as never });
      if (second !== undefined && ts.isIdentifier(second.name))
        inner.set(this.evaluator.symbolOf(second.name), { kind: "value", value: index });
      out.push(...this.body(fn.body as ts.ConciseBody, inner).nodes);
    });
    return out;
  }

  private localFunction(callee: ts.Expression, env: Env): LocalFunction | undefined {
    if (!ts.isIdentifier(callee)) return undefined;
    const known = env.get(this.evaluator.symbolOf(callee));
    return known?.kind === "function" ? known : undefined;
  }

  /** A local function called in place: its body, with its parameters bound to the values gen knows. */
  private inline(fn: LocalFunction["node"], call: ts.CallExpression, env: Env): FlowNode[] {
    if (this.following.has(fn) || fn.body === undefined) return [];
    this.following.add(fn);
    try {
      const inner = env.clone();
      inner.forget(writtenSymbols(fn, (n) => this.evaluator.symbolOf(n)));
      fn.parameters.forEach((p, i) => {
        const arg = call.arguments[i];
        if (!ts.isIdentifier(p.name)) return;
        const v = arg === undefined ? undefined : this.evaluator.value(arg, env);
        inner.set(this.evaluator.symbolOf(p.name), v?.known === true ? { kind: "value", value: v.value } : undefined);
      });
      return this.body(fn.body, inner).nodes;
    } finally {
      this.following.delete(fn);
    }
  }

  /** What a followed method or function knows at its start: its parameters bound to the arguments gen can compute. */
  private bind(declaration: ts.Declaration, call: ts.CallExpression, env: Env): Env {
    const inner = Env.empty();
    const fn = ts.isVariableDeclaration(declaration) || ts.isPropertyDeclaration(declaration) ? declaration.initializer : declaration;
    if (fn === undefined || !ts.isFunctionLike(fn)) return inner;
    fn.parameters.forEach((p, i) => {
      const arg = call.arguments[i];
      if (!ts.isIdentifier(p.name) || arg === undefined) return;
      const v = this.evaluator.value(arg, env);
      if (v.known) inner.set(this.evaluator.symbolOf(p.name), { kind: "value", value: v.value });
    });
    return inner;
  }

  private declarationOf(callee: ts.Expression): ts.Declaration | undefined {
    const symbol = this.evaluator.symbolOf(callee);
    return symbol?.valueDeclaration ?? symbol?.declarations?.[0];
  }

  /** The step a call calls, if it is a step call: a `@Step` method or `ctx.step(name, ...)`. */
  private stepNameOf(call: ts.CallExpression): string | undefined {
    const callee = call.expression;
    if (
      (ts.isPropertyAccessExpression(callee) || ts.isElementAccessExpression(callee)) &&
      this.context.runtime.memberAt(callee) === "Ctx.step"
    )
      return this.context.literal(call.arguments[0]) ?? dynamicName(call.arguments[0]);
    const declaration = this.declarationOf(callee);
    const key = declaration === undefined ? undefined : this.context.stepKeyOf(declaration);
    return key?.replace(/#\d+$/, "");
  }

  /** The body of a project function or workflow method a call runs, other than a step; for argument digests. */
  private helperBodyOf(call: ts.CallExpression): ts.Node | undefined {
    const declaration = this.declarationOf(call.expression);
    if (declaration === undefined || this.context.stepKeyOf(declaration) !== undefined) return undefined;
    const followed = this.context.helperOf(declaration) ?? (isProjectFunction(declaration) ? declaration : undefined);
    return followed === undefined ? undefined : helperBody(followed);
  }

  /** The signals a `ctx.condition(predicate)` waits on: those whose handlers set the fields its predicate reads. */
  private waitSignals(predicate: ts.Expression | undefined): string[] {
    if (predicate === undefined) return [];
    const fields = new Set<string>();
    const seen = new Set<ts.Node>();
    const visit = (n: ts.Node, depth: number): void => {
      if (ts.isPropertyAccessExpression(n) && n.expression.kind === ts.SyntaxKind.ThisKeyword) {
        fields.add(n.name.text);
        const body = this.context.memberBody(n.name.text);
        if (body !== undefined && depth < 3 && !seen.has(body)) {
          seen.add(body);
          visit(body, depth + 1);
        }
      }
      ts.forEachChild(n, (c) => visit(c, depth));
    };
    visit(predicate, 0);
    return this.context.signalsSetting(fields);
  }
}

/** A function or method declared in the project's own source, whose body gen can read. */
function isProjectFunction(declaration: ts.Declaration): boolean {
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
interface ForkArm extends Seq {
  readonly env: Env;
}

/** A branching statement whose arms are not yet assembled, so the statements after it can move into arms that go on. */
interface Fork {
  /** Nodes evaluated before the branch: its condition. */
  readonly before: FlowNode[];
  readonly arms: readonly ForkArm[];
  readonly at: SourceLocation;
  /** For a two-armed fork, the condition under which the first arm runs. */
  readonly condition?: string;
  build(arms: FlowNode[][]): FlowNode;
}

/** What is known after a fork whose arms all go on: for two arms on a condition, variables they set apart become its conditional. */
function forkEnv(read: Fork): Env {
  const [yes, no] = read.arms;
  if (read.condition !== undefined && yes !== undefined && no !== undefined && read.arms.length === 2)
    return Env.mergeFork(yes.env, no.env, read.condition);
  return Env.merge(read.arms.map((arm) => arm.env));
}

function isFork(read: Seq | Fork): read is Fork {
  return "arms" in read;
}

function flat(nodes: FlowNode[]): Seq {
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

function helperBody(declaration: ts.Declaration): ts.ConciseBody | undefined {
  if (ts.isMethodDeclaration(declaration) || ts.isFunctionDeclaration(declaration) || ts.isGetAccessorDeclaration(declaration))
    return declaration.body;
  if ((ts.isVariableDeclaration(declaration) || ts.isPropertyDeclaration(declaration)) && declaration.initializer !== undefined) {
    const init = declaration.initializer;
    if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) return init.body;
  }
  return undefined;
}

function endsClause(s: ts.Statement): boolean {
  return ts.isBreakStatement(s) || ts.isReturnStatement(s) || ts.isThrowStatement(s) || ts.isContinueStatement(s);
}

function isShortCircuit(kind: ts.SyntaxKind): boolean {
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
function unwrapNegation(condition: ts.Expression): { expression: ts.Expression; negated: boolean } {
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
