import { ts } from "ts-morph";
import type { AnalysisContext } from "./analysis-context.js";
import type { ParamIR, TypeRef, ValueRef } from "./ir.js";

/** The parameters of the nearest constructor in the class chain: what the engine injects. */
export function constructorParamsOf(
  context: AnalysisContext,
  classes: readonly ts.ClassLikeDeclaration[],
): { value: ValueRef; type: TypeRef; checkerType: ts.Type }[] {
  for (const cls of classes) {
    const ctor = cls.members.find(ts.isConstructorDeclaration);
    if (ctor === undefined) continue;
    return ctor.parameters.map((p) => {
      const type = context.checker.getTypeAtLocation(p);
      return { value: context.types.metadataValue(type), type: context.types.render(type), checkerType: type };
    });
  }
  return [];
}

/** The parameters and the result of a method, its promise unwrapped. */
export function methodSignature(context: AnalysisContext, method: ts.MethodDeclaration): { params: ParamIR[]; result: TypeRef } {
  const checker = context.checker;
  const signature = checker.getSignatureFromDeclaration(method);
  const params: ParamIR[] = method.parameters.map((p) => {
    const optional = p.questionToken !== undefined || p.initializer !== undefined;
    const rest = p.dotDotDotToken !== undefined;
    // The annotation keeps aliases that the `| undefined` of an optional parameter would flatten.
    const type = p.type !== undefined ? checker.getTypeFromTypeNode(p.type) : checker.getTypeAtLocation(p);
    return {
      name: ts.isIdentifier(p.name) ? p.name.text : "arg",
      type: context.types.render(type, optional),
      optional,
      rest,
    };
  });
  const returned = signature === undefined ? checker.getUnknownType() : signature.getReturnType();
  return { params, result: context.types.render(awaited(checker, returned)) };
}

export function awaited(checker: ts.TypeChecker, type: ts.Type): ts.Type {
  return checker.getAwaitedType(type) ?? type;
}
