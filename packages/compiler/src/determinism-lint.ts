import { ts } from "ts-morph";
import { ctxCall } from "./ctx-calls.js";
import type { RuntimeSymbols } from "./runtime-symbols.js";

/** A call in workflow code that would make a replay diverge, and what to use instead. */
export interface NondeterministicUse {
  readonly node: ts.Node;
  /** What was found, as written (`Date.now()`). */
  readonly what: string;
  /** The replacement, in words. */
  readonly fix: string;
}

/**
 * Finds what workflow code outside steps must not do, since a replay runs that code again and must
 * make the same calls: read the clock or a random source, start a timer, reach the network, or read
 * the environment. Only the built-in names count (declared by TypeScript's or Node's declaration
 * files), so a project's own `Date` or `fetch` is left alone. Functions handed to `ctx.step` and the
 * bodies of `@Step` methods are steps and are not read.
 */
export class DeterminismLint {
  constructor(
    private readonly checker: ts.TypeChecker,
    private readonly runtime: RuntimeSymbols,
    private readonly isStep: (declaration: ts.Node) => boolean,
  ) {}

  /** The uses in the members of a workflow class. */
  lintClass(cls: ts.ClassLikeDeclaration): NondeterministicUse[] {
    const out: NondeterministicUse[] = [];
    for (const member of cls.members) {
      if (this.isStep(member)) continue;
      // Queries only read the state; they journal nothing, so they cannot make a replay diverge.
      if (ts.getDecorators(member as ts.HasDecorators)?.some((d) => this.runtime.exportAt(callee(d)) === "Query")) continue;
      this.visit(member, out);
    }
    return out;
  }

  private visit(node: ts.Node, out: NondeterministicUse[]): void {
    if (ts.isCallExpression(node)) {
      const member = ts.isPropertyAccessExpression(node.expression) ? this.runtime.memberAt(node.expression) : undefined;
      // The function given to ctx.step (or awaitCompletion's send) is a step: anything goes there.
      if (ctxCall(member)?.runsStep === true) {
        this.visit(node.expression, out);
        const [first] = node.arguments;
        if (first !== undefined) this.visit(first, out);
        return;
      }
      const found = this.call(node);
      if (found !== undefined) out.push(found);
    } else if (
      ts.isNewExpression(node) &&
      (node.arguments === undefined || node.arguments.length === 0) &&
      this.builtin(node.expression, "Date")
    ) {
      out.push({ node, what: "new Date()", fix: "use new Date(this.ctx.now()), the workflow's journaled time" });
    } else if (ts.isPropertyAccessExpression(node) && node.name.text === "env" && this.builtin(node.expression, "process")) {
      out.push({
        node,
        what: "process.env",
        fix: "read the setting in a step, or pass it in the run's input, so a replay sees the value the run saw",
      });
      return;
    }
    ts.forEachChild(node, (child) => this.visit(child, out));
  }

  private call(call: ts.CallExpression): NondeterministicUse | undefined {
    const e = call.expression;
    if (ts.isPropertyAccessExpression(e)) {
      const method = e.name.text;
      if (method === "now" && this.builtin(e.expression, "Date"))
        return { node: call, what: "Date.now()", fix: "use this.ctx.now(), the workflow's journaled time" };
      if (method === "random" && this.builtin(e.expression, "Math"))
        return { node: call, what: "Math.random()", fix: "use this.ctx.random(), journaled with the run" };
      if (method === "randomUUID" && this.isNodeOrGlobal(e))
        return { node: call, what: `${e.getText()}()`, fix: "use this.ctx.uuid(), journaled with the run" };
      return undefined;
    }
    if (!ts.isIdentifier(e)) return undefined;
    const name = e.text;
    if ((name === "setTimeout" || name === "setInterval") && this.isNodeOrGlobal(e)) {
      return {
        node: call,
        what: `${name}()`,
        fix: "use await this.ctx.sleep(duration), a durable timer that survives restarts and replays",
      };
    }
    if (name === "fetch" && this.isNodeOrGlobal(e))
      return { node: call, what: "fetch()", fix: "make the request in a step (@Step method or this.ctx.step), so its answer is journaled" };
    if (name === "randomUUID" && this.isNodeOrGlobal(e))
      return { node: call, what: "randomUUID()", fix: "use this.ctx.uuid(), journaled with the run" };
    return undefined;
  }

  /** Whether an expression names the built-in global `name`. */
  private builtin(expression: ts.Expression, name: string): boolean {
    return ts.isIdentifier(expression) && expression.text === name && this.isNodeOrGlobal(expression);
  }

  /** Whether a name is declared only by declaration files of TypeScript's library or Node's types. */
  private isNodeOrGlobal(expression: ts.Expression): boolean {
    let symbol = this.checker.getSymbolAtLocation(expression);
    if (symbol !== undefined && symbol.flags & ts.SymbolFlags.Alias) symbol = this.checker.getAliasedSymbol(symbol);
    const declarations = symbol?.declarations ?? [];
    if (declarations.length === 0) return false;
    return declarations.every((d) => {
      const file = d.getSourceFile();
      return (
        file.isDeclarationFile && (/[\\/]typescript[\\/]lib[\\/]/.test(file.fileName) || /[\\/]@types[\\/]node[\\/]/.test(file.fileName))
      );
    });
  }
}

function callee(decorator: ts.Decorator): ts.Expression {
  const e = decorator.expression;
  return ts.isCallExpression(e) ? e.expression : e;
}
