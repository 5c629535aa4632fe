import { ts } from "ts-morph";
import type { FlowNode, SourceLocation } from "./ir.js";
import type { FlowContext } from "./flow-context.js";

/** The `Ctx` methods that send a message to another workflow, and the name of the step that journals it. */
export const MESSAGE_STEPS: ReadonlyMap<string, string> = new Map(
  ["startWorkflow", "signalWorkflow", "cancelWorkflow", "updateWorkflow", "signalWithStart"].map((m) => [`Ctx.${m}`, `ctx.${m}`]),
);

/**
 * The journaled calls and waits of a `Ctx` method other than steps and patch markers, or undefined
 * for a method that journals nothing. `signalsOf` names the signals a `ctx.condition` predicate waits on.
 */
export function durableCall(
  member: string,
  call: ts.CallExpression,
  at: SourceLocation,
  context: Pick<FlowContext, "literal" | "inlineStep">,
  signalsOf: (predicate: ts.Expression | undefined) => string[],
): FlowNode[] | undefined {
  const [first, second, , fourth] = call.arguments;
  const timer: FlowNode = { kind: "call", call: "timer", at };
  // A wait's timeout journals a timer only when the wait waits (no buffered signal, a false predicate).
  const timeout: FlowNode = { kind: "call", call: "wait-timer", at };
  switch (member) {
    case "Ctx.sleep":
    case "Ctx.sleepUntil":
      return [timer];
    case "Ctx.waitFor":
      return hasTimeout(second)
        ? [timeout]
        : [
            {
              kind: "wait",
              on: `signal "${context.literal(first) ?? (first === undefined ? "" : first.getText().replace(/\s+/g, " "))}"`,
              at,
            },
          ];
    case "Ctx.condition": {
      if (hasTimeout(second)) return [timeout];
      const signals = signalsOf(first);
      return [{ kind: "wait", on: "condition", at, ...(signals.length === 0 ? {} : { signals }) }];
    }
    case "Ctx.startChild":
    case "Ctx.executeChild": {
      const id = context.literal(call.arguments[1]) ?? dynamicName(call.arguments[1]);
      const nodes: FlowNode[] = [{ kind: "call", call: "child", name: id, at }];
      if (hasTimeout(fourth)) nodes.push(timeout);
      if (member === "Ctx.executeChild") nodes.push({ kind: "wait", on: `child "${id}"`, at });
      return nodes;
    }
    case "Ctx.setAttributes":
      return [{ kind: "call", call: "attributes", at }];
    case "Ctx.awaitCompletion": {
      const name = context.literal(first) ?? dynamicName(first);
      return [
        { kind: "step", key: context.inlineStep(call, name), at },
        { kind: "wait", on: `completion "${name}"`, at },
      ];
    }
    default:
      return undefined;
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
