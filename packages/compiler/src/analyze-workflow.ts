import { ts } from "ts-morph";
import type { AnalysisContext } from "./analysis-context.js";
import { analyzeServices } from "./analyze-services.js";
import type { SourceProblemCode } from "./errors.js";
import type { FlowEntry, HandlerIR, SourceLocation, StepIR, TypeRef, WorkflowIR } from "./ir.js";
import { locate } from "./source-location.js";
import { DeterminismLint } from "./determinism-lint.js";
import { FlowReader } from "./step-flow.js";
import { assignedFields, bodyOf, classChain, hasBody } from "./class-chain.js";
import { collectEnums } from "./workflow-enums.js";
import { constantString, decoratorArgument, decoratorCallee, memberName } from "./decorator-syntax.js";
import { optionName, type SourceReport, stepTypeOption, workflowOptions } from "./decorator-options.js";
import { scanCalls } from "./workflow-scan.js";
import { awaited, constructorParamsOf, methodSignature } from "./workflow-signatures.js";
import { defaultedFields, resultMethods } from "./step-results.js";

/** A class decorated with the runtime's `@Workflow`, and the decorator call. */
export interface WorkflowClass {
  readonly declaration: ts.ClassDeclaration;
  readonly decorator: ts.Decorator;
}

type HandlerKind = "Signal" | "Query" | "Update";

interface Member {
  readonly declaration: ts.MethodDeclaration;
  readonly member: string;
  /** The runtime decorator on it, if any. */
  readonly role?: "Step" | HandlerKind;
  readonly decorator?: ts.Decorator;
}

/**
 * Reads one workflow class into its intermediate form: names from the decorators, signatures from
 * the checker (promises unwrapped), and the step order of `run()` and of each handler. Problems go
 * to the context; the form is still returned when it could be built, so later checks (duplicate
 * names) see it, but it is never emitted while problems remain.
 */
export function analyzeWorkflow(context: AnalysisContext, workflow: WorkflowClass): WorkflowIR | undefined {
  return new WorkflowAnalysis(context, workflow).analyze();
}

class WorkflowAnalysis {
  private readonly checker: ts.TypeChecker;
  private readonly classes: ts.ClassLikeDeclaration[];
  private readonly members = new Map<string, Member>();
  private readonly stepKeys = new Map<ts.Declaration, string>();
  private readonly steps: StepIR[] = [];
  /** Methods, getters and function-valued fields of the class chain with a body, nearest declaration first. */
  private readonly bodies = new Map<string, ts.Declaration>();
  private readonly resultUses = new Map<string, { converted: boolean; asserted: string[] }>();
  private readonly fieldsSet = new Map<string, ReadonlySet<string>>();
  private readonly report: SourceReport = {
    locate: (node) => this.locate(node),
    problem: (code, node, message) => this.problem(code, node, message),
  };

  constructor(
    private readonly context: AnalysisContext,
    private readonly workflow: WorkflowClass,
  ) {
    this.checker = context.checker;
    this.classes = classChain(context.checker, workflow.declaration);
  }

  analyze(): WorkflowIR | undefined {
    const { declaration } = this.workflow;
    const className = declaration.name?.text ?? "default";
    const classSymbol = declaration.name === undefined ? undefined : this.checker.getSymbolAtLocation(declaration.name);
    if (classSymbol === undefined) {
      this.problem("FUSEE_GEN_INVALID_WORKFLOW", declaration, "A @Workflow class needs a name.");
      return undefined;
    }
    const options = workflowOptions(this.checker, this.workflow.decorator, className, this.report);
    if ((declaration.typeParameters?.length ?? 0) > 0) {
      this.problem(
        "FUSEE_GEN_INVALID_WORKFLOW",
        declaration,
        `Workflow class ${className} is generic; the engine instantiates workflows without type arguments. Fix: remove its type parameters.`,
      );
    }
    this.collectMembers();
    this.collectSteps();

    const run = this.members.get("run");
    if (run === undefined) {
      this.problem(
        "FUSEE_GEN_INVALID_WORKFLOW",
        declaration,
        `Workflow ${options.typeName} has no run() method. Fix: add async run(input) { ... } as the workflow body.`,
      );
      return undefined;
    }
    const runSignature = methodSignature(this.context, run.declaration);
    if (runSignature.params.length > 1) {
      this.problem(
        "FUSEE_GEN_INVALID_WORKFLOW",
        run.declaration,
        `run() of workflow ${options.typeName} takes ${runSignature.params.length} parameters; a run has one input. Fix: take one object parameter.`,
      );
    }

    const signals = this.handlers("Signal");
    const queries = this.handlers("Query");
    const updates = this.handlers("Update");
    for (const signal of signals) {
      if (signal.params.length > 1) {
        this.problemAt(
          "FUSEE_GEN_INVALID_WORKFLOW",
          signal.at,
          `Signal ${signal.name} of workflow ${options.typeName} takes ${signal.params.length} parameters; a signal carries one value. Fix: take one object parameter.`,
        );
      }
    }
    for (const update of updates) {
      if (update.params.length > 1) {
        this.problemAt(
          "FUSEE_GEN_INVALID_WORKFLOW",
          update.at,
          `Update ${update.name} of workflow ${options.typeName} takes ${update.params.length} parameters; an update carries one argument. Fix: take one object parameter.`,
        );
      }
    }

    const reader = this.flowReader();
    const flows: FlowEntry[] = [{ entry: "run", at: this.locate(run.declaration), nodes: reader.read(run.declaration.body) }];
    for (const [kind, handlers] of [
      ["update", updates],
      ["signal", signals],
    ] as const) {
      for (const handler of handlers) {
        const member = handler.member === undefined ? undefined : this.members.get(handler.member);
        if (member === undefined) continue;
        flows.push({ entry: `${kind}:${handler.name}`, at: handler.at, nodes: reader.read(member.declaration.body) });
      }
    }

    const scan = scanCalls(this.context, this.classes, this.report);
    const lint = new DeterminismLint(this.checker, this.context.runtime, (member) => this.stepKeys.has(member as ts.Declaration));
    for (const cls of this.classes) {
      for (const use of lint.lintClass(cls)) {
        this.problem(
          "FUSEE_GEN_NONDETERMINISM",
          use.node,
          `${use.what} in workflow ${options.typeName}, outside a step: a replay runs this code again and would get another value (or start what the journal cannot see), so runs could diverge from their journal. Fix: ${use.fix}.`,
        );
      }
    }
    for (const waited of scan.waits) {
      if (!signals.some((s) => s.name === waited.name)) signals.push(waited);
    }
    const declared = new Set(options.patches.map((p) => p.id));
    // As the runtime does, only a workflow that declares its patch IDs has the others refused.
    for (const use of options.declaresPatches ? scan.patchUses : []) {
      if (!declared.has(use.id)) {
        const known =
          options.patches.length === 0 ? "none are declared" : `declared: ${options.patches.map((p) => `"${p.id}"`).join(", ")}`;
        this.problemAt(
          "FUSEE_GEN_UNDECLARED_PATCH",
          use.at,
          `Patch ID "${use.id}" is not declared by workflow ${options.typeName} (${known}). Fix: add it to @Workflow({ patches: ["${use.id}"] }), or correct its spelling.`,
        );
      }
    }

    const input = runSignature.params[0];
    const constructorParams = constructorParamsOf(this.context, this.classes);
    const services = analyzeServices(
      this.context,
      constructorParams.map((p) => p.checkerType),
    );
    return {
      className,
      typeName: options.typeName,
      at: this.locate(declaration),
      classRef: this.context.types.declRef(classSymbol),
      patches: options.patches,
      patchUses: scan.patchUses,
      ...(input === undefined ? {} : { input }),
      output: runSignature.result,
      constructorParams: constructorParams.map(({ value, type }) => ({ value, type })),
      services,
      ...(scan.dynamicWait ? {} : { mailboxes: [...new Set(scan.waits.map((w) => w.name))].sort(compareText) }),
      steps: [...this.steps]
        .map((step) => {
          const use = this.resultUses.get(step.key);
          return use === undefined
            ? step
            : { ...step, resultUse: { converted: use.converted, asserted: [...use.asserted].sort(compareText) } };
        })
        .sort((a, b) => compareText(a.key, b.key)),
      signals: sortByName(signals),
      queries: sortByName(queries),
      updates: sortByName(updates),
      flows,
      enums: collectEnums(this.checker, this.classes, this.signatureTypes()),
    };
  }

  /** Methods of the class and its base classes, the nearest declaration of each name winning. */
  private collectMembers(): void {
    for (const cls of this.classes) {
      for (const element of cls.members) {
        const named = element.name === undefined ? undefined : memberName(element.name);
        if (named !== undefined && !this.bodies.has(named) && hasBody(element)) this.bodies.set(named, element);
        if (!ts.isMethodDeclaration(element) || element.name === undefined) continue;
        const member = memberName(element.name);
        if (member === undefined || this.members.has(member)) continue;
        let role: Member["role"];
        let decorator: ts.Decorator | undefined;
        for (const d of ts.getDecorators(element) ?? []) {
          const exported = this.context.runtime.exportAt(decoratorCallee(d));
          if (exported === "Step" || exported === "Signal" || exported === "Query" || exported === "Update") {
            role = exported;
            decorator = d;
          }
        }
        this.members.set(member, {
          declaration: element,
          member,
          ...(role === undefined ? {} : { role }),
          ...(decorator === undefined ? {} : { decorator }),
        });
      }
    }
  }

  private collectSteps(): void {
    const byName = new Map<string, Member>();
    for (const m of this.members.values()) {
      if (m.role !== "Step") continue;
      const name = optionName(this.checker, m.decorator, this.memberLabel(m), this.report) ?? m.member;
      const previous = byName.get(name);
      if (previous !== undefined) {
        this.problem(
          "FUSEE_GEN_DUPLICATE_NAME",
          m.declaration,
          `Step name "${name}" is used by methods ${previous.member} and ${m.member} of ${this.className()}. Fix: give one of them another name with @Step({ name }).`,
        );
        continue;
      }
      byName.set(name, m);
      const signature = methodSignature(this.context, m.declaration);
      const typeOption = stepTypeOption(this.context, m.decorator, this.memberLabel(m), this.report);
      const defaulted = defaultedFields(this.checker, m.decorator === undefined ? undefined : decoratorArgument(m.decorator));
      const methods = resultMethods(this.checker, m.declaration);
      this.steps.push({
        name,
        key: name,
        kind: "method",
        member: m.member,
        args: signature.params,
        result: signature.result,
        ...(methods.length > 0 && typeOption === undefined ? { resultMethods: methods } : {}),
        ...(typeOption === undefined ? {} : { typeOption }),
        ...(defaulted.length === 0 ? {} : { defaulted }),
        at: this.locate(m.declaration),
      });
      this.stepKeys.set(m.declaration, name);
    }
  }

  private handlers(kind: HandlerKind): HandlerIR[] {
    const out: HandlerIR[] = [];
    for (const m of this.members.values()) {
      if (m.role !== kind) continue;
      const name = optionName(this.checker, m.decorator, this.memberLabel(m), this.report) ?? m.member;
      const previous = out.find((h) => h.name === name);
      if (previous !== undefined) {
        this.problem(
          "FUSEE_GEN_DUPLICATE_NAME",
          m.declaration,
          `${kind} name "${name}" is used by methods ${previous.member ?? "?"} and ${m.member} of ${this.className()}. Fix: give one of them another name with @${kind}({ name }).`,
        );
        continue;
      }
      const signature = methodSignature(this.context, m.declaration);
      out.push({ name, member: m.member, params: signature.params, result: signature.result, at: this.locate(m.declaration) });
    }
    return out;
  }

  private flowReader(): FlowReader {
    const classes = new Set<ts.Node>(this.classes);
    // A member of the class chain is looked up by name, so a base class's call reaches the override nearest the class.
    const nearest = (declaration: ts.Declaration): string | undefined =>
      classes.has(declaration.parent) && "name" in declaration && declaration.name !== undefined
        ? memberName(declaration.name as ts.PropertyName)
        : undefined;
    return new FlowReader({
      checker: this.checker,
      runtime: this.context.runtime,
      locate: (node) => this.locate(node),
      stepKeyOf: (declaration) => {
        const direct = this.stepKeys.get(declaration);
        if (direct !== undefined) return direct;
        const name = nearest(declaration);
        const member = name === undefined ? undefined : this.members.get(name);
        return member === undefined ? undefined : this.stepKeys.get(member.declaration);
      },
      helperOf: (declaration) => {
        const name = nearest(declaration);
        return name === undefined ? undefined : (this.bodies.get(name) ?? undefined);
      },
      inlineStep: (call, name) => this.inlineStep(call, name),
      literal: (expression) => (expression === undefined ? undefined : constantString(this.checker, expression)),
      unresolved: (node, message) => this.problem("FUSEE_GEN_UNRESOLVED_CALL", node, message),
      signalsSetting: (fields) => this.signalsSetting(fields),
      memberBody: (name) => {
        const d = this.bodies.get(name);
        return d === undefined ? undefined : bodyOf(d);
      },
      resultUsed: (key, use) => {
        const known = this.resultUses.get(key);
        this.resultUses.set(key, {
          converted: (known?.converted ?? true) && use.converted,
          asserted: [...new Set([...(known?.asserted ?? []), ...use.asserted])],
        });
      },
    });
  }

  /** The signals and updates whose handlers assign one of the fields (`this.approved = ok`, `this.items.push(x)`). */
  private signalsSetting(fields: ReadonlySet<string>): string[] {
    const out: string[] = [];
    for (const m of this.members.values()) {
      if (m.role !== "Signal" && m.role !== "Update") continue;
      let set = this.fieldsSet.get(m.member);
      if (set === undefined) {
        set = assignedFields(m.declaration, (name) => this.bodies.get(name));
        this.fieldsSet.set(m.member, set);
      }
      if ([...fields].some((f) => set.has(f)))
        out.push(optionName(this.checker, m.decorator, this.memberLabel(m), this.report) ?? m.member);
    }
    return out.sort(compareText);
  }

  /** The types of every signature the workflow has: where its enums show. */
  private signatureTypes(): ts.Type[] {
    const out: ts.Type[] = [];
    for (const m of this.members.values()) {
      const signature = this.checker.getSignatureFromDeclaration(m.declaration);
      if (signature === undefined) continue;
      out.push(awaited(this.checker, signature.getReturnType()), ...signature.getParameters().map((p) => this.checker.getTypeOfSymbol(p)));
    }
    return out;
  }

  /** Inline steps of one name share a key while their types agree; another type gets `name#2`, `name#3`, ... */
  private inlineStep(call: ts.CallExpression, name: string): string {
    const result = this.render(awaited(this.checker, this.checker.getTypeAtLocation(call)));
    const same = this.steps.filter((s) => s.name === name);
    const match = same.find((s) => s.result.shape === result.shape && s.args.length === 0);
    if (match !== undefined) return match.key;
    const key = same.length === 0 ? name : `${name}#${same.length + 1}`;
    this.steps.push({ name, key, kind: "inline", args: [], result, at: this.locate(call) });
    return key;
  }

  private render(type: ts.Type): TypeRef {
    return this.context.types.render(type);
  }

  private className(): string {
    return this.workflow.declaration.name?.text ?? "default";
  }

  private memberLabel(m: Member): string {
    return `${this.className()}.${m.member}`;
  }

  private locate(node: ts.Node): SourceLocation {
    return locate(this.context.projectDir, node);
  }

  private problem(code: SourceProblemCode, node: ts.Node, message: string): void {
    this.problemAt(code, this.locate(node), message);
  }

  private problemAt(code: SourceProblemCode, at: SourceLocation, message: string): void {
    this.context.problems.push({ code, at, message });
  }
}

function sortByName<T extends { name: string }>(items: T[]): T[] {
  return [...items].sort((a, b) => compareText(a.name, b.name));
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
