import { messageStepName } from "@fusee/runtime/calls";
import { ts } from "ts-morph";
import { ctxCall } from "./ctx-calls.js";
import { durableCall, dynamicName, handsOverContext } from "./durable-calls.js";
import { helperBody, isProjectFunction, MAX_UNROLLED, type Seq, text } from "./flow-shapes.js";
import type { ExpressionText } from "./argument-text.js";
import type { FlowNode } from "./ir.js";
import { Env, type Evaluator, type LocalFunction, writtenSymbols } from "./known-values.js";
import { resultUse } from "./result-use.js";
import type { FlowContext } from "./flow-context.js";

/** What reading calls needs of the flow reader: expressions, bodies and callbacks. */
export interface ExpressionReader {
  readonly evaluator: Evaluator;
  readonly texts: ExpressionText;
  node(n: ts.Node, env: Env): FlowNode[];
  body(body: ts.ConciseBody, env: Env): Seq;
  callback(fn: ts.ArrowFunction | ts.FunctionExpression | ts.FunctionDeclaration, env: Env): FlowNode[];
}

/**
 * Reads calls in a workflow body: steps and durable calls of `ctx`, and the calls gen follows into
 * (methods of the class chain, project functions handed `ctx`, local functions), with the values of
 * their parameters where gen knows them; callbacks, `.then()` and `map` over a known list.
 */
export class CallReader {
  private readonly following = new Set<ts.Node>();

  constructor(
    private readonly context: FlowContext,
    private readonly reader: ExpressionReader,
  ) {}

  /** The patch ID of a `ctx.patched(id)` call. */
  patchedId(call: ts.CallExpression): string | undefined {
    const callee = call.expression;
    if (
      !(ts.isPropertyAccessExpression(callee) || ts.isElementAccessExpression(callee)) ||
      ctxCall(this.context.runtime.memberAt(callee))?.journals !== "patch"
    )
      return undefined;
    return this.context.literal(call.arguments[0]);
  }

  /** A call: its callee and arguments, then what it journals (a step, a durable call) or the body it runs. */
  call(call: ts.CallExpression, env: Env): FlowNode[] {
    const at = this.context.locate(call);
    const callee = call.expression;
    const member =
      ts.isPropertyAccessExpression(callee) || ts.isElementAccessExpression(callee) ? this.context.runtime.memberAt(callee) : undefined;
    const ctx = ctxCall(member);
    if (ctx?.journals === "step") {
      const name = this.context.literal(call.arguments[0]) ?? dynamicName(call.arguments[0]);
      const key = this.context.inlineStep(call, name);
      this.context.resultUsed(key, resultUse(call, this.context.checker));
      return [{ kind: "step", key, at }];
    }
    // A message to another workflow is journaled as a step of the sender, under the method's name.
    if (ctx?.message !== undefined)
      return [
        ...call.arguments.flatMap((a) => this.reader.node(a, env)),
        { kind: "step", key: this.context.inlineStep(call, messageStepName(ctx.message)), at },
      ];
    if (ctx?.journals === "patch") {
      const id = this.context.literal(call.arguments[0]);
      return id === undefined ? [] : [{ kind: "patch", id, at, then: [], else: [] }];
    }
    if (ctx?.journals === "deprecated-patch") {
      const id = this.context.literal(call.arguments[0]);
      return id === undefined ? [] : [{ kind: "deprecatedPatch", id, at }];
    }
    const iterated = this.iteration(call, env);
    if (iterated !== undefined) return iterated;
    const before = [...this.reader.node(callee, env), ...call.arguments.flatMap((a) => this.argument(a, env))];
    const durable = ctx === undefined ? undefined : durableCall(ctx, call, at, this.context, (p) => this.waitSignals(p));
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
        {
          kind: "step",
          key: stepKey,
          at,
          args: this.reader.texts.arguments(call.arguments, env),
          argsText: call.arguments.map(text).join(", "),
        },
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
      return [...before, ...this.reader.body(body, this.bind(followed, call, env)).nodes];
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
        inner.set(this.reader.evaluator.symbolOf(first.name), { kind: "awaited", node: parent.expression.expression });
      return this.reader.body(fn.body, inner).nodes;
    }
    if (fn !== undefined) return this.reader.callback(fn, env);
    return this.reader.node(a, env);
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
    const items = this.reader.evaluator.value(callee.expression, env);
    if (fn === undefined || fn.body === undefined || !items.known || !Array.isArray(items.value) || items.value.length > MAX_UNROLLED)
      return undefined;
    const out = this.reader.node(callee.expression, env);
    (items.value as readonly unknown[]).forEach((item, index) => {
      const inner = env.clone();
      const [first, second] = fn.parameters;
      if (first !== undefined && ts.isIdentifier(first.name))
        inner.set(this.reader.evaluator.symbolOf(first.name), { kind: "value", value: item as never });
      if (second !== undefined && ts.isIdentifier(second.name))
        inner.set(this.reader.evaluator.symbolOf(second.name), { kind: "value", value: index });
      out.push(...this.reader.body(fn.body as ts.ConciseBody, inner).nodes);
    });
    return out;
  }

  private localFunction(callee: ts.Expression, env: Env): LocalFunction | undefined {
    if (!ts.isIdentifier(callee)) return undefined;
    const known = env.get(this.reader.evaluator.symbolOf(callee));
    return known?.kind === "function" ? known : undefined;
  }

  /** A local function called in place: its body, with its parameters bound to the values gen knows. */
  private inline(fn: LocalFunction["node"], call: ts.CallExpression, env: Env): FlowNode[] {
    if (this.following.has(fn) || fn.body === undefined) return [];
    this.following.add(fn);
    try {
      const inner = env.clone();
      inner.forget(writtenSymbols(fn, (n) => this.reader.evaluator.symbolOf(n)));
      fn.parameters.forEach((p, i) => {
        const arg = call.arguments[i];
        if (!ts.isIdentifier(p.name)) return;
        const v = arg === undefined ? undefined : this.reader.evaluator.value(arg, env);
        inner.set(this.reader.evaluator.symbolOf(p.name), v?.known === true ? { kind: "value", value: v.value } : undefined);
      });
      return this.reader.body(fn.body, inner).nodes;
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
      const v = this.reader.evaluator.value(arg, env);
      if (v.known) inner.set(this.reader.evaluator.symbolOf(p.name), { kind: "value", value: v.value });
    });
    return inner;
  }

  private declarationOf(callee: ts.Expression): ts.Declaration | undefined {
    const symbol = this.reader.evaluator.symbolOf(callee);
    return symbol?.valueDeclaration ?? symbol?.declarations?.[0];
  }

  /** The step a call calls, if it is a step call: a `@Step` method or `ctx.step(name, ...)`. */
  stepNameOf(call: ts.CallExpression): string | undefined {
    const callee = call.expression;
    if (
      (ts.isPropertyAccessExpression(callee) || ts.isElementAccessExpression(callee)) &&
      ctxCall(this.context.runtime.memberAt(callee))?.journals === "step"
    )
      return this.context.literal(call.arguments[0]) ?? dynamicName(call.arguments[0]);
    const declaration = this.declarationOf(callee);
    const key = declaration === undefined ? undefined : this.context.stepKeyOf(declaration);
    return key?.replace(/#\d+$/, "");
  }

  /** The body of a project function or workflow method a call runs, other than a step; for argument digests. */
  helperBodyOf(call: ts.CallExpression): ts.Node | undefined {
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
