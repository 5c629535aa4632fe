/**
 * One before/after change of a workflow, as the corpus holds it: the source of version 1 and of
 * version 2 (the file of the workflow and any module it imports), the kind of change, and the
 * signals a driver sends at each wait.
 */
export interface ChangePair {
  readonly name: string;
  /** The kind of change, for the report: `sleep`, `wait`, `child`, `branch`, `types`, ... */
  readonly kind: string;
  readonly v1: WorkflowSource;
  readonly v2: WorkflowSource;
  /** The inputs runs are started with, one run per input and per wait; `[1]` by default. */
  readonly inputs?: readonly number[];
}

/** The parts of the corpus workflow that a pair changes; the rest is the same for every pair. */
export interface WorkflowSource {
  /** The body of `async run(input: number): Promise<string>`. */
  readonly body: string;
  /** More members of the class (steps, handlers, helpers). */
  readonly members?: string;
  /** Patch IDs declared in `@Workflow({ patches })`. */
  readonly patches?: readonly string[];
  /** Import lines added after the runtime's. */
  readonly imports?: string;
  /** Other modules of the project, by path under `src/` (`helpers.ts`). */
  readonly modules?: Readonly<Record<string, string>>;
  /** The name in `@Workflow(...)`, when not `Flow`. */
  readonly typeName?: string;
  /** The class name, when not `Flow`. */
  readonly className?: string;
  /** Replaces the default result type of step `b` (`string`). */
  readonly bResult?: string;
  /** Replaces the default body of step `b`. */
  readonly bBody?: string;
  /** Replaces the default parameter list of step `a` (`n: number`). */
  readonly aParams?: string;
  /** Declarations put before the workflow class (enums, base classes, mixins). */
  readonly prelude?: string;
  /** What the class extends (`extends Base`), when anything. */
  readonly heritage?: string;
  /** Replaces the constructor (`constructor(private readonly ctx: Ctx) {}`). */
  readonly ctor?: string;
  /** Default steps the class leaves out (declared elsewhere, in a base class say). */
  readonly omit?: readonly ("a" | "b" | "c" | "d")[];
  /** False to leave `patches` out of `@Workflow`, so the runtime takes any patch ID. */
  readonly declarePatches?: boolean;
  /** Replaces the default signal handler (`@Signal() approve(ok: boolean)`). */
  readonly signals?: string;
}

/** Modules every version has, so a pair that drops one leaves no stale file behind. */
export const DEFAULT_MODULES: Readonly<Record<string, string>> = {
  "helpers.ts": "export const HELPERS = 1;\n",
  "names.ts": "export const NAMES = 1;\n",
  "child.ts": `import { Workflow, Ctx } from "@fusee/runtime";

@Workflow("Child")
export class Child {
  constructor(private readonly ctx: Ctx) {}
  async run(input: number): Promise<number> {
    return input * 2;
  }
}
`,
};

/** The file of the corpus workflow for one version. */
export function workflowFile(source: WorkflowSource): string {
  const typeName = source.typeName ?? "Flow";
  const className = source.className ?? "Flow";
  const patches = (source.patches ?? []).map((p) => JSON.stringify(p)).join(", ");
  const options = source.declarePatches === false ? "" : `, patches: [${patches}]`;
  const omit = new Set(source.omit ?? []);
  const steps = {
    a: `  @Step() async a(${source.aParams ?? "n: number"}): Promise<string> { return "a" + String(n); }`,
    b: `  @Step() async b(n: number): Promise<${source.bResult ?? "string"}> { ${source.bBody ?? 'return "b" + String(n);'} }`,
    c: '  @Step() async c(n: number): Promise<string> { return "c" + String(n); }',
    d: '  @Step() async d(n: number): Promise<string> { return "d" + String(n); }',
  };
  return `import { Workflow, Step, Signal, Query, Ctx } from "@fusee/runtime";
${source.imports ?? ""}

export class Money {
  constructor(public cents = 0) {}
  plus(other: number): number { return this.cents + other; }
}
${source.prelude ?? ""}
@Workflow({ name: ${JSON.stringify(typeName)}${options} })
export class ${className}${source.heritage === undefined ? "" : ` ${source.heritage}`} {
  private approved = false;
  private seen: string[] = [];
  ${source.ctor ?? "constructor(private readonly ctx: Ctx) {}"}

  async run(input: number): Promise<string> {
${source.body}
  }

${Object.entries(steps)
  .filter(([name]) => !omit.has(name as keyof typeof steps))
  .map(([, text]) => text)
  .join("\n")}
${source.signals ?? "  @Signal() approve(ok: boolean): void { this.approved = ok; }"}
  @Query() status(): string { return this.seen.join(","); }
${source.members ?? ""}
}
`;
}

/** Every file of one version, by path under `src/`. */
export function versionFiles(source: WorkflowSource): Record<string, string> {
  return { ...DEFAULT_MODULES, ...(source.modules ?? {}), "flow.ts": workflowFile(source) };
}
