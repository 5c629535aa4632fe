import type { DeclRef, TypeExpr } from "./ir.js";

/** Spells a type expression, naming each referenced declaration with `nameOf` (the emitter's import binding). */
export function printType(expr: TypeExpr, nameOf: (ref: DeclRef) => string): string {
  const print = (e: TypeExpr): string => printType(e, nameOf);
  switch (expr.kind) {
    case "text":
      return expr.text;
    case "ref":
      return withArgs(nameOf(expr.ref), expr.args.map(print));
    case "global":
      return withArgs(expr.name, expr.args.map(print));
    case "enumMember":
      return `${nameOf(expr.ref)}.${expr.member}`;
    case "typeof":
      return `typeof ${nameOf(expr.ref)}`;
    case "array": {
      const element = expr.element;
      const inner = needsParensAsOperand(element) ? `(${print(element)})` : print(element);
      return `${expr.readonly ? "readonly " : ""}${inner}[]`;
    }
    case "tuple": {
      const elements = expr.elements.map((el) => {
        const type = print(el.type);
        if (el.name !== undefined) return `${el.rest ? "..." : ""}${el.name}${el.optional ? "?" : ""}: ${type}`;
        return el.rest ? `...${type}` : `${type}${el.optional ? "?" : ""}`;
      });
      return `${expr.readonly ? "readonly " : ""}[${elements.join(", ")}]`;
    }
    case "union":
      return expr.types.map((t) => (t.kind === "function" ? `(${print(t)})` : print(t))).join(" | ");
    case "intersection":
      return expr.types.map((t) => (t.kind === "function" || t.kind === "union" ? `(${print(t)})` : print(t))).join(" & ");
    case "object": {
      if (expr.members.length === 0) return "{}";
      const members = expr.members.map((m) =>
        m.kind === "property"
          ? `${m.readonly ? "readonly " : ""}${m.name}${m.optional ? "?" : ""}: ${print(m.type)}`
          : `${m.readonly ? "readonly " : ""}[key: ${print(m.keyType)}]: ${print(m.type)}`,
      );
      return `{ ${members.join("; ")} }`;
    }
    case "function": {
      const params = expr.params.map((p) => `${p.rest ? "..." : ""}${p.name}${p.optional ? "?" : ""}: ${print(p.type)}`);
      return `(${params.join(", ")}) => ${print(expr.result)}`;
    }
  }
}

/** A declaration as written in source: `Money`, or `Geo.Point` for a namespace member. */
export function declaredName(ref: DeclRef): string {
  return ref.binding === undefined ? ref.name : [ref.binding, ...(ref.path ?? [])].join(".");
}

function withArgs(name: string, args: readonly string[]): string {
  return args.length === 0 ? name : `${name}<${args.join(", ")}>`;
}

function needsParensAsOperand(expr: TypeExpr): boolean {
  return expr.kind === "union" || expr.kind === "intersection" || expr.kind === "function";
}
