import { ts } from "ts-morph";
import type { AnalysisContext } from "./analysis-context.js";
import { ctxCall } from "./ctx-calls.js";
import { constantString } from "./decorator-syntax.js";
import type { HandlerIR, SourceLocation } from "./ir.js";
import type { SourceReport } from "./decorator-options.js";

/** Every `ctx.waitFor(name)` (signals without a handler) and `ctx.patched` / `ctx.deprecatePatch` in the class. */
export function scanCalls(
  context: AnalysisContext,
  classes: readonly ts.ClassLikeDeclaration[],
  report: SourceReport,
): { waits: HandlerIR[]; dynamicWait: boolean; patchUses: { id: string; at: SourceLocation }[] } {
  const checker = context.checker;
  const waits: HandlerIR[] = [];
  let dynamicWait = false;
  const patchUses: { id: string; at: SourceLocation }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && (ts.isPropertyAccessExpression(node.expression) || ts.isElementAccessExpression(node.expression))) {
      const ctx = ctxCall(context.runtime.memberAt(node.expression));
      const first = node.arguments[0];
      if (ctx?.waits === "signal" && first !== undefined) {
        const name = constantString(checker, first);
        if (name === undefined) dynamicWait = true;
        const typeArgument = node.typeArguments?.[0];
        if (name !== undefined && !waits.some((w) => w.name === name)) {
          const type = typeArgument === undefined ? undefined : checker.getTypeFromTypeNode(typeArgument);
          const value = type === undefined ? context.types.render(checker.getUnknownType()) : context.types.render(type);
          waits.push({
            name,
            params: [{ name: "value", type: value, optional: false, rest: false }],
            result: context.types.render(checker.getVoidType()),
            at: report.locate(node),
          });
        }
      } else if (ctx?.journals === "patch" || ctx?.journals === "deprecated-patch") {
        const id = first === undefined ? undefined : constantString(checker, first);
        if (id === undefined) {
          report.problem(
            "FUSEE_GEN_INVALID_WORKFLOW",
            node,
            `The patch ID given to ctx.${ctx.name}() must be a string literal, so the lock can record it. Fix: write it inline.`,
          );
        } else patchUses.push({ id, at: report.locate(node) });
      }
    }
    ts.forEachChild(node, visit);
  };
  for (const cls of classes) visit(cls);
  return { waits, dynamicWait, patchUses };
}
