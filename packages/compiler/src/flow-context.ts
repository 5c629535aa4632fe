import type { ts } from "ts-morph";
import type { SourceLocation } from "./ir.js";
import type { RuntimeSymbols } from "./runtime-symbols.js";

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
