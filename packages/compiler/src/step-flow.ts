import { ts } from "ts-morph";
import type { FlowNode, SourceLocation } from "./ir.js";
import type { RuntimeSymbols } from "./runtime-symbols.js";

/** What the flow reader needs to know about the workflow class it walks. */
export interface FlowContext {
  readonly checker: ts.TypeChecker;
  readonly runtime: RuntimeSymbols;
  locate(node: ts.Node): SourceLocation;
  /** The step key of a `@Step` method, or undefined for any other declaration. */
  stepKeyOf(declaration: ts.Declaration): string | undefined;
  /** Whether a declaration is a method of the workflow class (or a base class) whose body should be followed. */
  isHelper(declaration: ts.Declaration): boolean;
  /** Registers an inline `ctx.step(name, fn)` call and returns its step key. */
  inlineStep(call: ts.CallExpression, name: string): string;
  /** The literal text of a name argument (`"early"`, a constant, a template), or undefined. */
  literal(expression: ts.Expression | undefined): string | undefined;
  /** Reports a call whose journaled calls cannot be read statically; gen refuses until the code changes. */
  unresolved(node: ts.Node, message: string): void;
}

/**
 * Reads the order in which a method body calls steps, following the static code paths: statements
 * in order, arguments before the call they feed, arms of branches side by side, loop bodies once.
 * Function expressions passed along (callbacks of `map`, `forEach`, `Promise.all`) count as loops,
 * since they may run any number of times; the function given to `ctx.step` is the step itself.
 */
export class FlowReader {
  private readonly following = new Set<ts.Node>();
  private readonly conditionText = (node: ts.Node): string => expandedText(node, this.context.checker);

  constructor(private readonly context: FlowContext) {}

  /** The pruned step tree of a method or function body. */
  read(body: ts.ConciseBody | undefined): FlowNode[] {
    if (body === undefined) return [];
    return prune(ts.isBlock(body) ? this.statements(body.statements).nodes : this.node(body));
  }

  /**
   * A statement list. When an arm of a branch ends in `return` or `throw`, the statements after the
   * branch run only on the other arms, so they are moved into those arms: `if (!ctx.patched(id)) {
   * old; return; } new` reads as a patch whose patched arm is `new`.
   */
  private statements(statements: readonly ts.Statement[], from = 0): Seq {
    const out: FlowNode[] = [];
    for (let i = from; i < statements.length; i++) {
      const read = this.statement(statements[i] as ts.Statement);
      if (isFork(read)) {
        if (read.arms.some((arm) => arm.exits)) {
          const rest = this.statements(statements, i + 1);
          const arms = read.arms.map((arm) => (arm.exits ? arm.nodes : [...arm.nodes, ...rest.nodes]));
          return { nodes: [...out, ...read.before, read.build(arms)], exits: read.arms.every((arm) => arm.exits || rest.exits) };
        }
        out.push(...read.before, read.build(read.arms.map((arm) => arm.nodes)));
      } else {
        out.push(...read.nodes);
        if (read.exits) return { nodes: out, exits: true };
      }
    }
    return { nodes: out, exits: false };
  }

  private statement(s: ts.Statement): Seq | Fork {
    const at = () => this.context.locate(s);
    if (ts.isBlock(s)) return this.statements(s.statements);
    if (ts.isReturnStatement(s)) return { nodes: s.expression === undefined ? [] : this.node(s.expression), exits: true };
    if (ts.isThrowStatement(s)) return { nodes: this.node(s.expression), exits: true };
    if (ts.isIfStatement(s)) {
      const whenTrue = seq(this.statement(s.thenStatement));
      const whenFalse = s.elseStatement === undefined ? { nodes: [], exits: false } : seq(this.statement(s.elseStatement));
      return this.choice(s.expression, whenTrue, whenFalse, at());
    }
    if (ts.isSwitchStatement(s)) {
      const arms: Seq[] = [];
      const clauses = s.caseBlock.clauses;
      clauses.forEach((_, i) => {
        // A clause falls through into the next until one ends in break, return, throw or continue.
        const arm: ts.Statement[] = [];
        for (const clause of clauses.slice(i)) {
          arm.push(...clause.statements);
          const last = clause.statements[clause.statements.length - 1];
          if (last !== undefined && endsClause(last)) break;
        }
        arms.push(this.statements(arm));
      });
      const cases = clauses.map((c) => (ts.isDefaultClause(c) ? "default" : text(c.expression)));
      if (!clauses.some(ts.isDefaultClause)) {
        arms.push({ nodes: [], exits: false });
        cases.push("default");
      }
      const location = at();
      const subject = text(s.expression);
      return { before: this.node(s.expression), arms, build: (folded) => ({ kind: "branch", at: location, arms: folded, switch: subject, cases }) };
    }
    if (ts.isForStatement(s)) {
      const init = s.initializer === undefined ? [] : this.node(s.initializer);
      const condition = s.condition === undefined ? [] : this.node(s.condition);
      const step = s.incrementor === undefined ? [] : this.node(s.incrementor);
      const over = [s.initializer, s.condition, s.incrementor].map((e) => (e === undefined ? "" : text(e))).join("; ");
      return flat([...init, ...condition, { kind: "loop", at: at(), body: [...this.body(s.statement), ...step, ...condition], over }]);
    }
    if (ts.isForOfStatement(s) || ts.isForInStatement(s)) {
      const over = `${text(s.initializer)} ${ts.isForOfStatement(s) ? "of" : "in"} ${text(s.expression)}`;
      return flat([...this.node(s.expression), { kind: "loop", at: at(), body: this.body(s.statement), over }]);
    }
    if (ts.isWhileStatement(s)) {
      const condition = this.node(s.expression);
      return flat([...condition, { kind: "loop", at: at(), body: [...this.body(s.statement), ...condition], over: text(s.expression) }]);
    }
    if (ts.isDoStatement(s)) {
      const once = [...this.body(s.statement), ...this.node(s.expression)];
      return flat([...once, { kind: "loop", at: at(), body: once, over: text(s.expression) }]);
    }
    if (ts.isTryStatement(s)) {
      return flat([
        {
          kind: "try",
          at: at(),
          body: this.statements(s.tryBlock.statements).nodes,
          catch: s.catchClause === undefined ? [] : this.statements(s.catchClause.block.statements).nodes,
          finally: s.finallyBlock === undefined ? [] : this.statements(s.finallyBlock.statements).nodes,
        },
      ]);
    }
    if (ts.isLabeledStatement(s)) return this.statement(s.statement);
    if (ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s)) return flat([]);
    return flat(this.children(s));
  }

  /** A loop body: a `return` inside leaves the loop too, which the tree does not model; the body is read as is. */
  private body(s: ts.Statement): FlowNode[] {
    return seq(this.statement(s)).nodes;
  }

  /** Any node that is not a statement handled above: expressions in evaluation order. */
  private node(n: ts.Node): FlowNode[] {
    if (ts.isCallExpression(n)) return this.call(n);
    if (ts.isArrowFunction(n) || ts.isFunctionExpression(n)) {
      return [{ kind: "loop", at: this.context.locate(n), body: this.read(n.body) }];
    }
    if (ts.isClassExpression(n) || ts.isFunctionDeclaration(n)) return [];
    if (ts.isConditionalExpression(n)) {
      return seq(this.choice(n.condition, flat(this.node(n.whenTrue)), flat(this.node(n.whenFalse)), this.context.locate(n))).nodes;
    }
    if (ts.isBinaryExpression(n) && isShortCircuit(n.operatorToken.kind)) {
      // `a && f()` runs f when a holds, `a || f()` when it does not, `a ?? f()` when a is nullish.
      const when = canonical(n.left, this.conditionText);
      const kind = n.operatorToken.kind;
      const nullish = kind === ts.SyntaxKind.QuestionQuestionToken || kind === ts.SyntaxKind.QuestionQuestionEqualsToken;
      const runsWhenFalse = !nullish && (kind === ts.SyntaxKind.BarBarToken || kind === ts.SyntaxKind.BarBarEqualsToken) !== when.negated;
      const right = this.node(n.right);
      return [
        ...this.node(n.left),
        {
          kind: "branch",
          at: this.context.locate(n),
          arms: runsWhenFalse ? [[], right] : [right, []],
          when: nullish ? `${when.negated ? "!" : ""}${when.text} == null` : when.text,
          ...(runsWhenFalse ? { swapped: true } : {}),
        },
      ];
    }
    return this.children(n);
  }

  private children(n: ts.Node): FlowNode[] {
    const out: FlowNode[] = [];
    ts.forEachChild(n, (child) => {
      if (ts.isTypeNode(child)) return;
      out.push(...(ts.isStatement(child) ? seq(this.statement(child)).nodes : this.node(child)));
    });
    return out;
  }

  private choice(condition: ts.Expression, whenTrue: Seq, whenFalse: Seq, at: SourceLocation): Fork {
    const guard = this.patchGuard(condition);
    if (guard !== undefined) {
      const [patched, unpatched] = guard.negated ? [whenFalse, whenTrue] : [whenTrue, whenFalse];
      return { before: [], arms: [patched, unpatched], build: ([then = [], otherwise = []]) => ({ kind: "patch", id: guard.id, at, then, else: otherwise }) };
    }
    const when = canonical(condition, this.conditionText);
    return {
      before: this.node(condition),
      arms: [whenTrue, whenFalse],
      build: ([yes = [], no = []]) => ({ kind: "branch", at, arms: when.negated ? [no, yes] : [yes, no], when: when.text, ...(when.negated ? { swapped: true } : {}) }),
    };
  }

  /** `ctx.patched("id")`, possibly negated or parenthesized, as a branch condition. */
  private patchGuard(condition: ts.Expression): { id: string; negated: boolean } | undefined {
    let e = condition;
    let negated = false;
    for (;;) {
      if (ts.isParenthesizedExpression(e)) e = e.expression;
      else if (ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.ExclamationToken) {
        negated = !negated;
        e = e.operand;
      } else break;
    }
    if (!ts.isCallExpression(e) || this.context.runtime.memberAt(e.expression) !== "Ctx.patched") return undefined;
    const id = this.context.literal(e.arguments[0]);
    return id === undefined ? undefined : { id, negated };
  }

  private call(call: ts.CallExpression): FlowNode[] {
    const { runtime, checker } = this.context;
    const at = this.context.locate(call);
    const member = ts.isPropertyAccessExpression(call.expression) || ts.isElementAccessExpression(call.expression)
      ? runtime.memberAt(call.expression)
      : undefined;
    if (member === "Ctx.step") {
      const name = this.context.literal(call.arguments[0]) ?? dynamicName(call.arguments[0]);
      return [{ kind: "step", key: this.context.inlineStep(call, name), at }];
    }
    // A message to another workflow is journaled as a step of the sender, under the method's name.
    const message = member === undefined ? undefined : MESSAGE_STEPS.get(member);
    if (message !== undefined) {
      return [...call.arguments.flatMap((a) => this.node(a)), { kind: "step", key: this.context.inlineStep(call, message), at }];
    }
    if (member === "Ctx.patched") {
      const id = this.context.literal(call.arguments[0]);
      return id === undefined ? [] : [{ kind: "patch", id, at, then: [], else: [] }];
    }
    if (member === "Ctx.deprecatePatch") {
      const id = this.context.literal(call.arguments[0]);
      return id === undefined ? [] : [{ kind: "deprecatedPatch", id, at }];
    }
    const before = [...this.node(call.expression), ...call.arguments.flatMap((a) => this.node(a))];
    const durable = member === undefined ? undefined : this.durable(member, call, at);
    if (durable !== undefined) return [...before, ...durable];
    let symbol = checker.getSymbolAtLocation(call.expression);
    if (symbol !== undefined && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    const declaration = symbol?.valueDeclaration ?? symbol?.declarations?.[0];
    if (declaration === undefined) return before;
    const stepKey = this.context.stepKeyOf(declaration);
    if (stepKey !== undefined) return [...before, { kind: "step", key: stepKey, at, args: call.arguments.map(text).join(", ") }];
    const helper = this.context.isHelper(declaration) || (this.handsOverContext(call) && isProjectFunction(declaration));
    if (!helper && this.handsOverContext(call) && !this.context.runtime.isRuntimeFile(declaration.getSourceFile())) {
      this.context.unresolved(
        call,
        `${text(call.expression)}() is handed the workflow's ctx, but fusee gen cannot read its body (it is declared in ${declaration.getSourceFile().isDeclarationFile ? "a declaration file" : "a form gen does not follow"}), so the durable calls it makes are unknown. Fix: make the calls in the workflow class or in a function declared in this project's source, or pass what it needs instead of ctx.`,
      );
      return before;
    }
    if (helper && !this.following.has(declaration)) {
      const body = helperBody(declaration);
      if (body === undefined) {
        if (this.handsOverContext(call)) this.context.unresolved(call, `${text(call.expression)}() is handed the workflow's ctx but has no body gen can read, so the durable calls it makes are unknown. Fix: call a function with a body, declared in this project's source.`);
        return before;
      }
      this.following.add(declaration);
      try {
        const inner = ts.isBlock(body) ? this.statements(body.statements).nodes : this.node(body);
        return [...before, ...inner];
      } finally {
        this.following.delete(declaration);
      }
    }
    return before;
  }

  /** The journaled calls and waits of a `Ctx` method other than steps and patch markers. */
  private durable(member: string, call: ts.CallExpression, at: SourceLocation): FlowNode[] | undefined {
    const [first, second, , fourth] = call.arguments;
    const timer: FlowNode = { kind: "call", call: "timer", at };
    // A wait's timeout journals a timer only when the wait waits (no buffered signal, a false predicate).
    const timeout: FlowNode = { kind: "call", call: "wait-timer", at };
    switch (member) {
      case "Ctx.sleep":
      case "Ctx.sleepUntil":
        return [timer];
      case "Ctx.waitFor":
        return hasTimeout(second) ? [timeout] : [{ kind: "wait", on: `signal "${this.context.literal(first) ?? (first === undefined ? "" : text(first))}"`, at }];
      case "Ctx.condition":
        return hasTimeout(second) ? [timeout] : [{ kind: "wait", on: "condition", at }];
      case "Ctx.startChild":
      case "Ctx.executeChild": {
        const id = this.context.literal(call.arguments[1]) ?? dynamicName(call.arguments[1]);
        const nodes: FlowNode[] = [{ kind: "call", call: "child", name: id, at }];
        if (hasTimeout(fourth)) nodes.push(timeout);
        if (member === "Ctx.executeChild") nodes.push({ kind: "wait", on: `child "${id}"`, at });
        return nodes;
      }
      case "Ctx.setAttributes":
        return [{ kind: "call", call: "attributes", at }];
      case "Ctx.awaitCompletion": {
        const name = this.context.literal(first) ?? dynamicName(first);
        return [{ kind: "step", key: this.context.inlineStep(call, name), at }, { kind: "wait", on: `completion "${name}"`, at }];
      }
      default:
        return undefined;
    }
  }

  /** Whether a call hands the workflow's `ctx` (or the workflow itself) to the function it calls. */
  private handsOverContext(call: ts.CallExpression): boolean {
    return call.arguments.some((a) => a.kind === ts.SyntaxKind.ThisKeyword || this.isCtx(a));
  }

  private isCtx(expression: ts.Expression): boolean {
    const symbol = this.context.checker.getTypeAtLocation(expression).getSymbol();
    const declaration = symbol?.declarations?.[0];
    return symbol?.name === "Ctx" && declaration !== undefined && this.context.runtime.isRuntimeFile(declaration.getSourceFile());
  }
}

/** Whether an options argument may set a timeout (a literal without `timeout` does not). */
function hasTimeout(options: ts.Expression | undefined): boolean {
  if (options === undefined) return false;
  if (ts.isObjectLiteralExpression(options)) {
    return options.properties.some((p) => p.name === undefined || !ts.isIdentifier(p.name) || p.name.text === "timeout" || ts.isSpreadAssignment(p));
  }
  return true;
}

/** A function or method declared in the project's own source, whose body gen can read. */
function isProjectFunction(declaration: ts.Declaration): boolean {
  const file = declaration.getSourceFile();
  if (file.isDeclarationFile || /[\\/]node_modules[\\/]/.test(file.fileName)) return false;
  if (ts.isFunctionDeclaration(declaration) || ts.isMethodDeclaration(declaration)) return true;
  return ts.isVariableDeclaration(declaration) && declaration.initializer !== undefined && (ts.isArrowFunction(declaration.initializer) || ts.isFunctionExpression(declaration.initializer));
}

/** Source text with runs of white space made one space. */
function text(node: ts.Node): string {
  return node.getText().replace(/\s+/g, " ").trim();
}

/**
 * A branch condition as compared across versions: parentheses and negations peeled, and comparisons
 * written one way (`a > b` as `b < a`, `a !== b` as the negation of `a === b`), so that negating a
 * condition and swapping the arms reads as the same branch.
 */
export function canonical(condition: ts.Expression, textOf: (node: ts.Node) => string = text): { text: string; negated: boolean } {
  let e = condition;
  let negated = false;
  for (;;) {
    if (ts.isParenthesizedExpression(e)) e = e.expression;
    else if (ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.ExclamationToken) {
      negated = !negated;
      e = e.operand;
    } else break;
  }
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

/**
 * The text of a condition with each `const` alias of a plain value (`const amount = input;`)
 * written as what it names, so introducing or removing such an alias is no change of condition.
 */
function expandedText(node: ts.Node, checker: ts.TypeChecker, depth = 0): string {
  if (ts.isIdentifier(node) && depth < 4) {
    const declaration = checker.getSymbolAtLocation(node)?.valueDeclaration;
    if (
      declaration !== undefined &&
      ts.isVariableDeclaration(declaration) &&
      declaration.initializer !== undefined &&
      (ts.getCombinedNodeFlags(declaration) & ts.NodeFlags.Const) !== 0 &&
      declaration.getSourceFile() === node.getSourceFile() &&
      isPlainValue(declaration.initializer)
    ) {
      return expandedText(declaration.initializer, checker, depth + 1);
    }
  }
  const source = node.getSourceFile().text;
  let out = "";
  let at = node.getStart();
  node.forEachChild((child) => {
    out += source.slice(at, child.getStart());
    out += expandedText(child, checker, depth);
    at = child.getEnd();
  });
  out += source.slice(at, node.getEnd());
  return out.replace(/\s+/g, " ").trim();
}

/** A name, a property of one, or a literal: reading it twice gives the same value. */
function isPlainValue(e: ts.Expression): boolean {
  if (ts.isParenthesizedExpression(e)) return isPlainValue(e.expression);
  if (ts.isIdentifier(e) || ts.isStringLiteral(e) || ts.isNumericLiteral(e) || e.kind === ts.SyntaxKind.ThisKeyword) return true;
  return ts.isPropertyAccessExpression(e) && isPlainValue(e.expression);
}

/** The `Ctx` methods that send a message to another workflow, and the name of the step that journals it. */
const MESSAGE_STEPS: ReadonlyMap<string, string> = new Map(
  ["startWorkflow", "signalWorkflow", "cancelWorkflow", "updateWorkflow", "signalWithStart"].map((m) => [`Ctx.${m}`, `ctx.${m}`]),
);

/** Nodes read from statements, and whether they always end in `return` or `throw`. */
interface Seq {
  readonly nodes: FlowNode[];
  readonly exits: boolean;
}

/** A branching statement whose arms are not yet assembled, so the statements after it can move into arms that go on. */
interface Fork {
  /** Nodes evaluated before the branch: its condition. */
  readonly before: FlowNode[];
  readonly arms: readonly Seq[];
  build(arms: FlowNode[][]): FlowNode;
}

function isFork(read: Seq | Fork): read is Fork {
  return "arms" in read;
}

function seq(read: Seq | Fork): Seq {
  if (!isFork(read)) return read;
  return { nodes: [...read.before, read.build(read.arms.map((arm) => arm.nodes))], exits: read.arms.every((arm) => arm.exits) };
}

function flat(nodes: FlowNode[]): Seq {
  return { nodes, exits: false };
}

/** Drops the branches, loops and try blocks that hold no step and no patch marker. */
export function prune(nodes: readonly FlowNode[]): FlowNode[] {
  const out: FlowNode[] = [];
  for (const node of nodes) {
    switch (node.kind) {
      case "step":
      case "call":
      case "wait":
      case "deprecatedPatch":
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
        if (body.length > 0) out.push({ ...node, body });
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
  if (ts.isMethodDeclaration(declaration) || ts.isFunctionDeclaration(declaration)) return declaration.body;
  if (ts.isVariableDeclaration(declaration) && declaration.initializer !== undefined) {
    const init = declaration.initializer;
    if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) return init.body;
  }
  if (ts.isPropertyDeclaration(declaration) && declaration.initializer !== undefined) {
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

/** A step name computed at run time, recorded by its source text (`fetch-${…}` for templates). */
function dynamicName(expression: ts.Expression | undefined): string {
  if (expression === undefined) return "<unnamed>";
  if (ts.isTemplateExpression(expression)) {
    return expression.head.text + expression.templateSpans.map((span) => "${…}" + span.literal.text).join("");
  }
  return `<${expression.getText()}>`;
}
