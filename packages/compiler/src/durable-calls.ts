import { ts } from "ts-morph";
import type { FlowNode, SourceLocation } from "./ir.js";
import type { FlowContext } from "./flow-context.js";
import type { CtxCall } from "./ctx-calls.js";

/**
 * The journaled calls and waits of a `Ctx` call other than steps, messages and patch markers, or
 * undefined for a call that journals nothing. `signalsOf` names the signals a `ctx.condition`
 * predicate waits on.
 */
export function durableCall(
  ctx: CtxCall,
  call: ts.CallExpression,
  at: SourceLocation,
  context: Pick<FlowContext, "literal" | "inlineStep">,
  signalsOf: (predicate: ts.Expression | undefined) => string[],
): FlowNode[] | undefined {
  const first = call.arguments[0];
  // A wait's timeout journals a timer only when the wait waits (no buffered signal, a false predicate).
  const timeout: FlowNode = { kind: "call", call: "wait-timer", at };
  const timed = ctx.timeoutArgument !== undefined && hasTimeout(call.arguments[ctx.timeoutArgument]);
  switch (ctx.journals) {
    case "timer":
    case "attributes":
      return [{ kind: "call", call: ctx.journals, at }];
    case "wait": {
      if (timed) return [timeout];
      if (ctx.waits === "condition") {
        const signals = signalsOf(first);
        return [{ kind: "wait", on: "condition", at, ...(signals.length === 0 ? {} : { signals }) }];
      }
      const name = context.literal(first) ?? (first === undefined ? "" : first.getText().replace(/\s+/g, " "));
      return [{ kind: "wait", on: `signal "${name}"`, at }];
    }
    case "child": {
      const id = context.literal(call.arguments[1]) ?? dynamicName(call.arguments[1]);
      const nodes: FlowNode[] = [{ kind: "call", call: "child", name: id, at }];
      if (timed) nodes.push(timeout);
      if (ctx.waits === "child") nodes.push({ kind: "wait", on: `child "${id}"`, at });
      return nodes;
    }
    case "completion": {
      const name = context.literal(first) ?? dynamicName(first);
      return [
        { kind: "step", key: context.inlineStep(call, name), at },
        { kind: "wait", on: `completion "${name}"`, at },
      ];
    }
    // Read by the caller (steps, messages, patches), or nothing gen follows (the end of the run).
    case "nothing":
    case "step":
    case "message":
    case "patch":
    case "deprecated-patch":
    case "continue-as-new":
      return undefined;
    default: {
      // A kind of call the runtime's table gained: gen must learn what it journals before it compiles.
      const unknown: never = ctx.journals;
      return unknown;
    }
  }
}

/** Whether an options argument may set a timeout (a literal without `timeout` does not). */
function hasTimeout(options: ts.Expression | undefined): boolean {
  if (options === undefined) return false;
  if (ts.isObjectLiteralExpression(options)) {
    return options.properties.some(
      (p) => p.name === undefined || !ts.isIdentifier(p.name) || p.name.text === "timeout" || ts.isSpreadAssignment(p),
    );
  }
  return true;
}

/** Whether a call hands the workflow's `ctx` (or the workflow itself) to the function it calls. */
export function handsOverContext(call: ts.CallExpression, context: Pick<FlowContext, "checker" | "runtime">): boolean {
  return call.arguments.some((a) => {
    if (a.kind === ts.SyntaxKind.ThisKeyword) return true;
    const symbol = context.checker.getTypeAtLocation(a).getSymbol();
    const declaration = symbol?.declarations?.[0];
    return symbol?.name === "Ctx" && declaration !== undefined && context.runtime.isRuntimeFile(declaration.getSourceFile());
  });
}

/** A step name computed at run time, recorded by its source text (`fetch-${…}` for templates). */
export function dynamicName(expression: ts.Expression | undefined): string {
  if (expression === undefined) return "<unnamed>";
  if (ts.isTemplateExpression(expression)) {
    return expression.head.text + expression.templateSpans.map((span) => "${…}" + span.literal.text).join("");
  }
  return `<${expression.getText()}>`;
}
