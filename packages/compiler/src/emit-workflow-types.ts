import type { SourceProblem } from "./errors.js";
import { describeUse, ImportSet } from "./emit-imports.js";
import { GENERATED_HEADER } from "./emit-client.js";
import type { ParamIR, ProjectIR, ServiceIR, StepIR, ValueRef, WorkflowIR } from "./ir.js";
import { RUNTIME_PACKAGE } from "./runtime-symbols.js";

const REGISTER = "registerWorkflowTypes";
const REGISTER_SERVICE = "registerConstructorTypes";

/**
 * Emits the worker-side type table: one `registerWorkflowTypes(Class, info)` call per workflow with
 * the constructor parameter types (what `design:paramtypes` would hold) and the classes that inputs,
 * results, step values, signal and update arguments are rebuilt with. Builds that emit no decorator
 * metadata (esbuild, tsx) get dependency injection and typed rehydration from it. Primitive and
 * plain JSON types have no class and are left out. Then one `registerConstructorTypes(Class, params)`
 * per service those constructors need, directly or not, so services are injected there too.
 */
export function emitWorkflowTypes(ir: ProjectIR, outFile: string, problems: SourceProblem[]): string {
  const imports = new ImportSet(outFile, new Set([REGISTER, REGISTER_SERVICE]));
  const purpose = "the worker type table";
  const want = (value: ValueRef | undefined, use: string) => {
    if (value?.kind === "class") imports.want(value.ref, use, problems, purpose);
  };
  for (const w of ir.workflows) {
    imports.want(w.classRef, `the worker type table (workflow ${w.typeName})`, problems, purpose);
    for (const [i, p] of w.constructorParams.entries()) want(p.value, describeUse(`constructor parameter ${i + 1}`, w.typeName, w.at));
    want(w.input?.type.runtimeClass, describeUse("the input of run()", w.typeName, w.at));
    want(w.output.runtimeClass, describeUse("the result of run()", w.typeName, w.at));
    for (const s of w.steps) {
      const use = describeUse(`step "${s.name}"`, w.typeName, s.at);
      for (const a of s.args) want(a.type.runtimeClass, use);
      want(s.typeOption ?? s.result.runtimeClass, use);
    }
    for (const [kind, handlers] of [
      ["signal", w.signals],
      ["update", w.updates],
    ] as const) {
      for (const h of handlers) {
        const use = describeUse(`${kind} "${h.name}"`, w.typeName, h.at);
        for (const p of h.params) want(p.type.runtimeClass, use);
        if (kind === "update") want(h.result.runtimeClass, use);
      }
    }
  }
  const services = uniqueServices(ir.workflows);
  for (const service of services) {
    const use = `the constructor of service ${service.classRef.name}`;
    want({ kind: "class", ref: service.classRef }, use);
    for (const p of service.params) want(p, use);
  }
  const value = (v: ValueRef | undefined): string | undefined => {
    if (v === undefined) return undefined;
    if (v.kind === "undefined") return "undefined";
    if (v.kind === "global") return v.name;
    return imports.nameOf(v.ref);
  };

  const lines = [
    GENERATED_HEADER,
    "// Types of the workflows for the worker: constructor parameters and the classes values are rebuilt with.",
    "",
  ];
  if (ir.workflows.length === 0) return `${[...lines, "export {};"].join("\n")}\n`;
  lines.push(...imports.statements(false, new Map([[RUNTIME_PACKAGE, services.length > 0 ? [REGISTER, REGISTER_SERVICE] : [REGISTER]]])));
  for (const w of ir.workflows) lines.push("", ...registration(w, value));
  if (services.length > 0) {
    lines.push("", "// Services the workflows' constructors need, directly or through other services.");
    const calls = services.map(
      (s) =>
        `${REGISTER_SERVICE}(${value({ kind: "class", ref: s.classRef }) ?? s.classRef.name}, [${s.params.map((p) => value(p) ?? "Object").join(", ")}]);`,
    );
    lines.push(...calls.sort(compareText));
  }
  return `${lines.join("\n")}\n`;
}

function registration(w: WorkflowIR, value: (v: ValueRef | undefined) => string | undefined): string[] {
  const fields: string[][] = [];
  if (w.constructorParams.length > 0) {
    fields.push([`constructorParams: [${w.constructorParams.map((p) => value(p.value) ?? "Object").join(", ")}],`]);
  }
  const input = value(w.input?.type.runtimeClass);
  if (input !== undefined) fields.push([`input: ${input},`]);
  const output = value(w.output.runtimeClass);
  if (output !== undefined) fields.push([`output: ${output},`]);

  const steps = new Map<string, string>();
  for (const s of w.steps) {
    const entry = stepEntry(s, value);
    if (entry !== undefined && !steps.has(s.name)) steps.set(s.name, entry);
  }
  if (steps.size > 0) fields.push(group("steps", steps));
  const signals = new Map<string, string>();
  for (const s of w.signals) {
    const args = argList(s.params, value);
    if (args !== undefined) signals.set(s.name, `{ ${args} }`);
  }
  if (signals.size > 0) fields.push(group("signals", signals));
  const updates = new Map<string, string>();
  for (const u of w.updates) {
    const parts = [argList(u.params, value), optional("result", value(u.result.runtimeClass))].filter((p) => p !== undefined);
    if (parts.length > 0) updates.set(u.name, `{ ${parts.join(", ")} }`);
  }
  if (updates.size > 0) fields.push(group("updates", updates));
  if (w.mailboxes !== undefined) fields.push([`mailboxes: [${w.mailboxes.map((m) => JSON.stringify(m)).join(", ")}],`]);

  const name = value({ kind: "class", ref: w.classRef }) ?? w.className;
  if (fields.length === 0) return [`${REGISTER}(${name}, {});`];
  return [`${REGISTER}(${name}, {`, ...fields.flat().map((l) => `  ${l}`), "});"];
}

function stepEntry(s: StepIR, value: (v: ValueRef | undefined) => string | undefined): string | undefined {
  const parts = [argList(s.args, value), optional("result", value(s.typeOption ?? s.result.runtimeClass))].filter((p) => p !== undefined);
  return parts.length === 0 ? undefined : `{ ${parts.join(", ")} }`;
}

/** `args: [Money, undefined]`, positions kept; absent when no argument has a class. */
function argList(params: readonly ParamIR[], value: (v: ValueRef | undefined) => string | undefined): string | undefined {
  const values = params.map((p) => value(p.type.runtimeClass));
  if (values.every((v) => v === undefined)) return undefined;
  return `args: [${values.map((v) => v ?? "undefined").join(", ")}]`;
}

function optional(key: string, v: string | undefined): string | undefined {
  return v === undefined ? undefined : `${key}: ${v}`;
}

function group(name: string, entries: ReadonlyMap<string, string>): string[] {
  const keys = [...entries.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return [`${name}: {`, ...keys.map((k) => `  ${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${entries.get(k) ?? "{}"},`), "},"];
}

/** Each service once, however many workflows need it; a class is known by where it is declared. */
function uniqueServices(workflows: readonly WorkflowIR[]): ServiceIR[] {
  const byKey = new Map<string, ServiceIR>();
  for (const w of workflows) {
    for (const s of w.services) {
      const key = `${s.classRef.at.file}:${s.classRef.at.line}:${s.classRef.name}`;
      if (!byKey.has(key)) byKey.set(key, s);
    }
  }
  return [...byKey.values()];
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
