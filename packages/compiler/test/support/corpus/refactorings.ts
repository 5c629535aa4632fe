import type { ChangePair, WorkflowSource } from "./pair.js";

/**
 * The second corpus: before/after pairs written from the refactorings real projects make to
 * workflows with runs in flight (loop rewrites, mixins and base classes, enums, optional fields,
 * argument changes, early returns, patches moved, signal handling rewritten, result types changed),
 * apart from the pairs the rules of `fusee gen --check` were written against. Whether a change
 * breaks is not written here: the runtime decides (see judge.ts).
 *
 * Most workflows call step a, wait for signal "go", do something (the part a pair changes), sleep,
 * call step c and return. Pairs whose paths depend on the input list inputs that take each path.
 */
const A = "    const x = await this.a(input);";
const GO = '    await this.ctx.waitFor<number>("go");';
const SLEEP = '    await this.ctx.sleep("10s");';
const C = "    const z = await this.c(3);";
const RET = '    return [x, y, z].join(",");';

/** The usual body around `middle`, which must define `y`. */
function around(...middle: string[]): string {
  return [A, GO, ...middle, SLEEP, C, RET].join("\n");
}

function lines(...parts: string[]): string {
  return parts.join("\n");
}

function src(body: string, extra: Omit<WorkflowSource, "body"> = {}): WorkflowSource {
  return { body, ...extra };
}

function pair(name: string, kind: string, v1: WorkflowSource, v2: WorkflowSource, inputs?: readonly number[]): ChangePair {
  return { name, kind, v1, v2, ...(inputs === undefined ? {} : { inputs }) };
}

const B = "    const y = await this.b(2);";
const base = src(around(B));

/** A step `e` taking a value of any JSON type and an optional unit. */
const E_STEP = '  @Step() async e(v: number | string, unit?: string): Promise<string> { return "e" + String(v) + (unit ?? ""); }';

const TIER_STEP = "  @Step() async tier(n: number): Promise<Tier> { return n > 5 ? Tier.Gold : Tier.Basic; }";

const QUOTE = "  @Step() async quote(n: number): Promise<{ cents: number }> { return { cents: n * 100 }; }";

const WITHOUT_APPROVE = "  @Signal() note(text: string): void { this.seen.push(text); }";

export const REFACTORINGS: readonly ChangePair[] = [
  // ---- loops rewritten ----
  pair(
    "for loop rewritten as a while loop over its counter",
    "loop",
    src(around('    let y = "";', "    for (let i = 0; i < 3; i++) y += await this.b(i);")),
    src(around('    let y = "";', "    let i = 0;", "    while (i < 3) {", "      y += await this.b(i);", "      i += 1;", "    }")),
  ),
  pair(
    "while loop rewritten as do…while, entered at least once",
    "loop",
    src(around('    let y = "";', "    let i = 0;", "    while (i < 2) {", "      y += await this.b(i);", "      i++;", "    }")),
    src(around('    let y = "";', "    let i = 0;", "    do {", "      y += await this.b(i);", "      i++;", "    } while (i < 2);")),
  ),
  pair(
    "for…of over a list rewritten as an indexed for loop",
    "loop",
    src(around("    const parts = [1, 2, 3];", '    let y = "";', "    for (const p of parts) y += await this.b(p);")),
    src(
      around(
        "    const parts = [1, 2, 3];",
        '    let y = "";',
        "    for (let k = 0; k < parts.length; k++) y += await this.b(parts[k] ?? 0);",
      ),
    ),
  ),
  pair(
    "sequential loop turned into Promise.all over map",
    "loop",
    src(around('    let y = "";', "    for (const p of [1, 2]) y += await this.b(p);")),
    src(around("    const ys = await Promise.all([1, 2].map((p) => this.b(p)));", '    const y = ys.join("");')),
  ),
  pair(
    "loop bound lowered",
    "loop",
    src(around('    let y = "";', "    for (let i = 0; i < 3; i++) y += await this.b(i);")),
    src(around('    let y = "";', "    for (let i = 0; i < 2; i++) y += await this.b(i);")),
  ),
  pair(
    "loop unrolled by hand",
    "loop",
    src(around('    let y = "";', "    for (let i = 0; i < 2; i++) y += await this.b(i);")),
    src(around('    let y = "";', "    y += await this.b(0);", "    y += await this.b(1);")),
  ),
  pair(
    "loop with a break rewritten with its bound in the header",
    "loop",
    src(around('    let y = "";', "    for (let i = 0; ; i++) {", "      if (i >= 2) break;", "      y += await this.b(i);", "    }")),
    src(around('    let y = "";', "    for (let i = 0; i < 2; i++) y += await this.b(i);")),
  ),
  pair(
    "step inserted into a loop that runs input times",
    "loop",
    src(around('    let y = "";', "    for (let i = 0; i < input; i++) y += await this.b(i);")),
    src(
      around('    let y = "";', "    for (let i = 0; i < input; i++) {", "      y += await this.b(i);", "      await this.d(i);", "    }"),
    ),
    [0, 2],
  ),

  // ---- mixins and base classes ----
  pair(
    "step method moved to a base class",
    "mixin",
    base,
    src(around(B), {
      prelude: 'export class Billing {\n  @Step() async b(n: number): Promise<string> { return "b" + String(n); }\n}\n',
      heritage: "extends Billing",
      ctor: "constructor(private readonly ctx: Ctx) { super(); }",
      omit: ["b"],
    }),
  ),
  pair(
    "helper making a step call moved into a mixin",
    "mixin",
    src(around("    const y = await this.audit(2);"), {
      members: '  async audit(n: number): Promise<string> { return this.ctx.step("audit", async () => "audit" + String(n)); }',
    }),
    src(around("    const y = await this.audit(2);"), {
      prelude: `type WithCtx = new (...args: any[]) => { readonly ctx: Ctx };
function Audited<T extends WithCtx>(base: T) {
  return class extends base {
    async audit(n: number): Promise<string> { return this.ctx.step("audit", async () => "audit" + String(n)); }
  };
}
export class FlowBase {
  constructor(readonly ctx: Ctx) {}
}
`,
      heritage: "extends Audited(FlowBase)",
      ctor: "constructor(ctx: Ctx) { super(ctx); }",
    }),
  ),
  pair(
    "helper method moved to an abstract base class",
    "mixin",
    src(around("    const y = await this.pay();"), { members: "  protected async pay(): Promise<string> { return this.b(2); }" }),
    src(around("    const y = await this.pay();"), {
      prelude:
        "export abstract class Payments {\n  abstract b(n: number): Promise<string>;\n  protected async pay(): Promise<string> { return this.b(2); }\n}\n",
      heritage: "extends Payments",
      ctor: "constructor(private readonly ctx: Ctx) { super(); }",
    }),
  ),
  pair(
    "step inserted in a helper of the base class",
    "mixin",
    src(around("    const y = await this.pay();"), {
      prelude:
        "export abstract class Payments {\n  abstract b(n: number): Promise<string>;\n  abstract d(n: number): Promise<string>;\n  protected async pay(): Promise<string> { return this.b(2); }\n}\n",
      heritage: "extends Payments",
      ctor: "constructor(private readonly ctx: Ctx) { super(); }",
    }),
    src(around("    const y = await this.pay();"), {
      prelude:
        "export abstract class Payments {\n  abstract b(n: number): Promise<string>;\n  abstract d(n: number): Promise<string>;\n  protected async pay(): Promise<string> { await this.d(1); return this.b(2); }\n}\n",
      heritage: "extends Payments",
      ctor: "constructor(private readonly ctx: Ctx) { super(); }",
    }),
  ),
  pair(
    "workflow subclass renamed, its workflow name kept",
    "mixin",
    src(around("    const y = await this.bill();"), {
      className: "FlowImpl",
      prelude:
        "export abstract class FlowBase {\n  abstract b(n: number): Promise<string>;\n  protected bill(): Promise<string> { return this.b(2); }\n}\n",
      heritage: "extends FlowBase",
      ctor: "constructor(private readonly ctx: Ctx) { super(); }",
    }),
    src(around("    const y = await this.bill();"), {
      className: "OrderFlow",
      prelude:
        "export abstract class FlowBase {\n  abstract b(n: number): Promise<string>;\n  protected bill(): Promise<string> { return this.b(2); }\n}\n",
      heritage: "extends FlowBase",
      ctor: "constructor(private readonly ctx: Ctx) { super(); }",
    }),
  ),
  pair(
    "run()'s body moved into a method of a base class",
    "mixin",
    base,
    src("    return this.main(input);", {
      prelude: `export abstract class FlowCore {
  protected abstract readonly ctx: Ctx;
  abstract a(n: number): Promise<string>;
  abstract b(n: number): Promise<string>;
  abstract c(n: number): Promise<string>;
  protected async main(input: number): Promise<string> {
${around(B)}
  }
}
`,
      heritage: "extends FlowCore",
      ctor: "constructor(protected readonly ctx: Ctx) { super(); }",
    }),
  ),

  // ---- enums ----
  pair(
    "enum member appended, with a case old runs never reach",
    "enum",
    src(
      around(
        '    let y = "";',
        "    switch (t) {",
        "      case Tier.Basic: y = await this.b(1); break;",
        "      case Tier.Gold: y = await this.b(2); break;",
        "    }",
      ).replace(A, `${A}\n    const t = await this.tier(input);`),
      { prelude: "export enum Tier { Basic, Gold }\n", members: TIER_STEP },
    ),
    src(
      around(
        '    let y = "";',
        "    switch (t) {",
        "      case Tier.Basic: y = await this.b(1); break;",
        "      case Tier.Gold: y = await this.b(2); break;",
        "      case Tier.Platinum: y = await this.d(3); break;",
        "    }",
      ).replace(A, `${A}\n    const t = await this.tier(input);`),
      { prelude: "export enum Tier { Basic, Gold, Platinum }\n", members: TIER_STEP },
    ),
    [1, 7],
  ),
  pair(
    "enum member inserted before others, shifting recorded values",
    "enum",
    src(lines(A, "    const t = await this.tier(input);", "    if (t === Tier.Gold) await this.d(1);", GO, B, SLEEP, C, RET), {
      prelude: "export enum Tier { Basic, Gold }\n",
      members: TIER_STEP,
    }),
    src(lines(A, "    const t = await this.tier(input);", "    if (t === Tier.Gold) await this.d(1);", GO, B, SLEEP, C, RET), {
      prelude: "export enum Tier { Basic, Silver, Gold }\n",
      members: TIER_STEP,
    }),
    [1, 7],
  ),
  pair(
    "string enum gains a member",
    "enum",
    src(around("    const plan = await this.plan(input);", "    const y = plan === Plan.Pro ? await this.b(2) : await this.d(2);"), {
      prelude: 'export enum Plan { Free = "free", Pro = "pro" }\n',
      members: "  @Step() async plan(n: number): Promise<Plan> { return n > 5 ? Plan.Pro : Plan.Free; }",
    }),
    src(around("    const plan = await this.plan(input);", "    const y = plan === Plan.Pro ? await this.b(2) : await this.d(2);"), {
      prelude: 'export enum Plan { Free = "free", Pro = "pro", Team = "team" }\n',
      members: "  @Step() async plan(n: number): Promise<Plan> { return n > 5 ? Plan.Pro : Plan.Free; }",
    }),
    [1, 7],
  ),
  pair(
    "enum member renamed, its value kept",
    "enum",
    src(lines(A, "    const t = await this.tier(input);", "    if (t === Tier.Gold) await this.d(1);", GO, B, SLEEP, C, RET), {
      prelude: "export enum Tier { Basic, Gold }\n",
      members: TIER_STEP,
    }),
    src(lines(A, "    const t = await this.tier(input);", "    if (t === Tier.Premium) await this.d(1);", GO, B, SLEEP, C, RET), {
      prelude: "export enum Tier { Basic, Premium }\n",
      members: "  @Step() async tier(n: number): Promise<Tier> { return n > 5 ? Tier.Premium : Tier.Basic; }",
    }),
    [1, 7],
  ),
  pair(
    "enum value handed to a step shifts when a member is inserted",
    "enum",
    src(around("    const y = await this.b(Tier.Gold);"), { prelude: "export enum Tier { Basic, Gold }\n" }),
    src(around("    const y = await this.b(Tier.Gold);"), { prelude: "export enum Tier { Basic, Silver, Gold }\n" }),
  ),

  // ---- optional fields ----
  pair(
    "step result gains an optional field read with a default",
    "optional",
    src(around("    const y = await this.b(q.cents);").replace(A, `${A}\n    const q = await this.quote(input);`), { members: QUOTE }),
    src(
      around('    const y = (await this.b(q.cents)) + (q.currency ?? "EUR");').replace(A, `${A}\n    const q = await this.quote(input);`),
      {
        members:
          '  @Step() async quote(n: number): Promise<{ cents: number; currency?: string }> { return { cents: n * 100, currency: "EUR" }; }',
      },
    ),
  ),
  pair(
    "step result gains an optional field read with !",
    "optional",
    src(around("    const y = await this.b(q.cents);").replace(A, `${A}\n    const q = await this.quote(input);`), { members: QUOTE }),
    src(
      around("    const y = (await this.b(q.cents)) + q.currency!.toLowerCase();").replace(
        A,
        `${A}\n    const q = await this.quote(input);`,
      ),
      {
        members:
          '  @Step() async quote(n: number): Promise<{ cents: number; currency?: string }> { return { cents: n * 100, currency: "EUR" }; }',
      },
    ),
  ),
  pair(
    "step result rebuilt as a class whose field has a default",
    "optional",
    src(around("    const y = await this.b(q.cents);").replace(A, `${A}\n    const q = await this.quote(input);`), { members: QUOTE }),
    src(around("    const y = (await this.b(q.cents)) + q.label();").replace(A, `${A}\n    const q = await this.quote(input);`), {
      prelude:
        'export class Quote {\n  cents = 0;\n  currency = "EUR";\n  label(): string { return this.currency + String(this.cents); }\n}\n',
      members: "  @Step({ type: Quote }) async quote(n: number): Promise<Quote> { const q = new Quote(); q.cents = n * 100; return q; }",
    }),
  ),
  pair(
    "step result field made optional and read with a default",
    "optional",
    src(around("    const y = await this.b(q.cents) + q.currency;").replace(A, `${A}\n    const q = await this.quote(input);`), {
      members:
        '  @Step() async quote(n: number): Promise<{ cents: number; currency: string }> { return { cents: n * 100, currency: "EUR" }; }',
    }),
    src(around('    const y = await this.b(q.cents) + (q.currency ?? "EUR");').replace(A, `${A}\n    const q = await this.quote(input);`), {
      members: "  @Step() async quote(n: number): Promise<{ cents: number; currency?: string }> { return { cents: n * 100 }; }",
    }),
  ),
  pair(
    "step result field renamed and a method called on it",
    "optional",
    src(around("    const y = await this.b(q.cents);").replace(A, `${A}\n    const q = await this.quote(input);`), { members: QUOTE }),
    src(around("    const y = await this.b(Number(q.amount.toFixed(0)));").replace(A, `${A}\n    const q = await this.quote(input);`), {
      members: "  @Step() async quote(n: number): Promise<{ amount: number }> { return { amount: n * 100 }; }",
    }),
  ),

  // ---- arguments ----
  pair("step argument constant changed", "arguments", base, src(around("    const y = await this.b(3);"))),
  pair(
    "step argument changed from a number to a string",
    "arguments",
    src(around("    const y = await this.e(2);"), { members: E_STEP }),
    src(around('    const y = await this.e("2");'), { members: E_STEP }),
  ),
  pair(
    "argument added to a step call",
    "arguments",
    src(around("    const y = await this.e(2);"), { members: E_STEP }),
    src(around('    const y = await this.e(2, "kg");'), { members: E_STEP }),
  ),
  pair(
    "argument moved into a local constant",
    "arguments",
    src(around("    const y = await this.b(input + 1);")),
    src(around("    const next = input + 1;", "    const y = await this.b(next);")),
  ),
  pair(
    "numeric literal argument reformatted",
    "arguments",
    src(around("    const y = await this.b(1_000);")),
    src(around("    const y = await this.b(1000);")),
  ),
  pair(
    "object argument's properties reordered",
    "arguments",
    src(around('    const y = await this.f({ n: 2, unit: "kg" });'), {
      members: "  @Step() async f(o: { n: number; unit: string }): Promise<string> { return String(o.n) + o.unit; }",
    }),
    src(around('    const y = await this.f({ unit: "kg", n: 2 });'), {
      members: "  @Step() async f(o: { n: number; unit: string }): Promise<string> { return String(o.n) + o.unit; }",
    }),
  ),
  pair(
    "first argument given to a step that took none",
    "arguments",
    src(around("    const y = await this.g();"), {
      members: '  @Step() async g(n?: number): Promise<string> { return "g" + String(n ?? 0); }',
    }),
    src(around("    const y = await this.g(0);"), {
      members: '  @Step() async g(n?: number): Promise<string> { return "g" + String(n ?? 0); }',
    }),
  ),
  pair(
    "argument computed by an imported function whose body changed",
    "arguments",
    src(around("    const y = await this.b(scale(input));"), {
      imports: 'import { scale } from "./helpers.js";',
      modules: { "helpers.ts": "export function scale(n: number): number {\n  return n * 2;\n}\n" },
    }),
    src(around("    const y = await this.b(scale(input));"), {
      imports: 'import { scale } from "./helpers.js";',
      modules: { "helpers.ts": "export function scale(n: number): number {\n  return n * 3;\n}\n" },
    }),
  ),
  pair(
    "default parameter added to a step method",
    "arguments",
    src(around("    const y = await this.e(2);"), { members: E_STEP }),
    src(around("    const y = await this.e(2);"), {
      members: '  @Step() async e(v: number | string, unit = "kg"): Promise<string> { return "e" + String(v) + unit; }',
    }),
  ),
  pair(
    "string argument built with a template literal instead of concatenation",
    "arguments",
    src(around('    const y = await this.e("id-" + String(input));'), { members: E_STEP }),
    src(around("    const y = await this.e(`id-${input}`);"), { members: E_STEP }),
  ),

  // ---- bigint ----
  pair(
    "step result moved to bigint, normalised where it is read",
    "bigint",
    src(around("    const total = BigInt(await this.total(input));", "    const y = await this.b(Number(total % 7n));"), {
      members: "  @Step() async total(n: number): Promise<number> { return n * 100; }",
    }),
    src(around("    const total = BigInt(await this.total(input));", "    const y = await this.b(Number(total % 7n));"), {
      members: "  @Step() async total(n: number): Promise<bigint> { return BigInt(n) * 100n; }",
    }),
  ),
  pair(
    "step result moved from bigint to number, read through Number()",
    "bigint",
    src(around("    const total = Number(await this.total(input));", "    const y = await this.b(total % 7);"), {
      members: "  @Step() async total(n: number): Promise<bigint> { return BigInt(n) * 100n; }",
    }),
    src(around("    const total = Number(await this.total(input));", "    const y = await this.b(total % 7);"), {
      members: "  @Step() async total(n: number): Promise<number> { return n * 100; }",
    }),
  ),
  pair(
    "step result moved from number to bigint and used in bigint arithmetic",
    "bigint",
    src(around("    const total = await this.total(input);", "    const y = await this.b(total % 7);"), {
      members: "  @Step() async total(n: number): Promise<number> { return n * 100; }",
    }),
    src(around("    const total = await this.total(input);", "    const y = await this.b(Number(total % 7n));"), {
      members: "  @Step() async total(n: number): Promise<bigint> { return BigInt(n) * 100n; }",
    }),
  ),

  // ---- early returns and guard clauses ----
  pair(
    "guard clause for invalid input that runs in flight never met",
    "early-return",
    base,
    src(['    if (input < 0) return "invalid";', A, GO, B, SLEEP, C, RET].join("\n")),
  ),
  pair(
    "guard clause that runs in flight meet",
    "early-return",
    base,
    src(['    if (input > 0) return "positive";', A, GO, B, SLEEP, C, RET].join("\n")),
  ),
  pair(
    "early return after the first wait that runs in flight never take",
    "early-return",
    base,
    src([A, GO, '    if (input < 0) return "late";', B, SLEEP, C, RET].join("\n")),
  ),
  pair(
    "validation that throws inserted before the first step",
    "early-return",
    base,
    src(['    if (!Number.isFinite(input)) throw new RangeError("input must be a number");', A, GO, B, SLEEP, C, RET].join("\n")),
  ),
  pair(
    "early return moved before a step, after the last wait of its path",
    "early-return",
    src([A, GO, B, '    if (input < 0) return "negative";', SLEEP, C, RET].join("\n")),
    src([A, GO, '    if (input < 0) return "negative";', B, SLEEP, C, RET].join("\n")),
    [1, -1],
  ),

  // ---- patches moved ----
  pair(
    "patched() hoisted into a constant",
    "patch",
    src([A, GO, '    if (this.ctx.patched("audit")) await this.d(1);', B, SLEEP, C, RET].join("\n"), { patches: ["audit"] }),
    src([A, GO, '    const audited = this.ctx.patched("audit");', "    if (audited) await this.d(1);", B, SLEEP, C, RET].join("\n"), {
      patches: ["audit"],
    }),
  ),
  pair(
    "patched() hoisted above the first wait",
    "patch",
    src([A, GO, '    if (this.ctx.patched("audit")) await this.d(1);', B, SLEEP, C, RET].join("\n"), { patches: ["audit"] }),
    src(['    const audited = this.ctx.patched("audit");', A, GO, "    if (audited) await this.d(1);", B, SLEEP, C, RET].join("\n"), {
      patches: ["audit"],
    }),
  ),
  pair(
    "early return wrapped in a new patch",
    "patch",
    base,
    src([A, '    if (this.ctx.patched("reject-negative") && input < 0) return "negative";', GO, B, SLEEP, C, RET].join("\n"), {
      patches: ["reject-negative"],
    }),
    [1, -1],
  ),
  pair(
    "patch guard moved into a helper method",
    "patch",
    src([A, GO, '    if (this.ctx.patched("audit")) await this.d(1);', B, SLEEP, C, RET].join("\n"), { patches: ["audit"] }),
    src([A, GO, "    await this.audit();", B, SLEEP, C, RET].join("\n"), {
      patches: ["audit"],
      members: '  private async audit(): Promise<void> { if (this.ctx.patched("audit")) await this.d(1); }',
    }),
  ),
  pair(
    "declared patch ID that nothing recorded used for two changes",
    "patch",
    src(around(B), { patches: ["audit"] }),
    src(
      [
        A,
        GO,
        '    if (this.ctx.patched("audit")) await this.d(1);',
        B,
        SLEEP,
        '    if (this.ctx.patched("audit")) await this.d(5);',
        C,
        RET,
      ].join("\n"),
      { patches: ["audit"] },
    ),
  ),
  pair(
    "patch ID used in a workflow that declares no patches",
    "patch",
    src(around(B), { declarePatches: false }),
    src([A, GO, '    if (this.ctx.patched("audit")) await this.d(1);', B, SLEEP, C, RET].join("\n"), { declarePatches: false }),
  ),
  pair(
    "patch guard negated with its arms swapped",
    "patch",
    src(around('    const y = this.ctx.patched("bill-d") ? await this.d(2) : await this.b(2);'), { patches: ["bill-d"] }),
    src(around("    let y: string;", '    if (!this.ctx.patched("bill-d")) y = await this.b(2);', "    else y = await this.d(2);"), {
      patches: ["bill-d"],
    }),
  ),
  pair(
    "deprecatePatch written after the step it guarded",
    "patch",
    src(around('    const y = this.ctx.patched("double") ? await this.b(4) : await this.b(2);'), { patches: ["double"] }),
    src(around("    const y = await this.b(4);", '    this.ctx.deprecatePatch("double");'), { patches: ["double"] }),
  ),

  // ---- signals ----
  pair(
    "signal handler and condition replaced by a waitFor of the same signal",
    "signal",
    src([A, "    await this.ctx.condition(() => this.approved);", B, SLEEP, C, RET].join("\n")),
    src([A, '    await this.ctx.waitFor<boolean>("approve");', B, SLEEP, C, RET].join("\n"), { signals: WITHOUT_APPROVE }),
  ),
  pair(
    "waitFor replaced by a signal handler and a condition",
    "signal",
    src([A, '    await this.ctx.waitFor<boolean>("approve");', B, SLEEP, C, RET].join("\n"), { signals: WITHOUT_APPROVE }),
    src([A, "    await this.ctx.condition(() => this.approved);", B, SLEEP, C, RET].join("\n")),
  ),
  pair(
    "condition rewritten to read a getter",
    "signal",
    src([A, "    await this.ctx.condition(() => this.approved);", B, SLEEP, C, RET].join("\n")),
    src([A, "    await this.ctx.condition(() => this.ready);", B, SLEEP, C, RET].join("\n"), {
      members: "  private get ready(): boolean { return this.approved; }",
    }),
  ),
  pair(
    "signal handler method renamed, its signal name kept",
    "signal",
    src([A, "    await this.ctx.condition(() => this.approved);", B, SLEEP, C, RET].join("\n")),
    src([A, "    await this.ctx.condition(() => this.approved);", B, SLEEP, C, RET].join("\n"), {
      signals: '  @Signal({ name: "approve" }) onApprove(ok: boolean): void { this.approved = ok; }',
    }),
  ),

  // ---- after the last wait ----
  pair("step appended after the last wait", "after-last-wait", base, src([A, GO, B, SLEEP, C, "    await this.d(4);", RET].join("\n"))),
  pair(
    "sleep appended after the last wait",
    "after-last-wait",
    base,
    src([A, GO, B, SLEEP, C, '    await this.ctx.sleep("1s");', RET].join("\n")),
  ),
  pair("last step removed", "after-last-wait", base, src([A, GO, B, SLEEP, '    const z = "c3";', RET].join("\n"))),
  pair(
    "step appended after the last wait in one arm",
    "after-last-wait",
    base,
    src([A, GO, B, SLEEP, C, "    if (input > 5) await this.d(4);", RET].join("\n")),
    [1, 7],
  ),
  pair(
    "step appended after a child workflow's result, the last wait",
    "after-last-wait",
    src(
      [
        A,
        GO,
        B,
        SLEEP,
        '    const k = await this.ctx.executeChild<number>("Child", "kid-1", 2);',
        C,
        '    return [x, y, z, k].join(",");',
      ].join("\n"),
    ),
    src(
      [
        A,
        GO,
        B,
        SLEEP,
        '    const k = await this.ctx.executeChild<number>("Child", "kid-1", 2);',
        C,
        "    await this.d(k);",
        '    return [x, y, z, k].join(",");',
      ].join("\n"),
    ),
  ),
  pair(
    "result computed otherwise after the last wait",
    "after-last-wait",
    base,
    src([A, GO, B, SLEEP, C, '    return [z, y, x].join("/");'].join("\n")),
  ),

  // ---- result types ----
  pair(
    "step result narrowed to a template literal type",
    "types",
    base,
    src(around(B), { bResult: "`b${number}`", bBody: "return `b${n}`;" }),
  ),
  pair(
    "step result narrowed to a union of literals",
    "types",
    src(around("    const y = await this.e(2);"), {
      members: '  @Step() async e(n: number): Promise<string> { return n > 0 ? "ok" : "retry"; }',
    }),
    src(around("    const y = await this.e(2);"), {
      members: '  @Step() async e(n: number): Promise<"ok" | "retry"> { return n > 0 ? "ok" : "retry"; }',
    }),
  ),
  pair(
    "step result becomes a class whose inherited method is called",
    "types",
    src(around("    const y = await this.b(q.cents);").replace(A, `${A}\n    const q = await this.quote(input);`), { members: QUOTE }),
    src(around("    const y = await this.b(q.doubled());").replace(A, `${A}\n    const q = await this.quote(input);`), {
      prelude:
        'export class Amount {\n  cents = 0;\n  doubled(): number { return this.cents * 2; }\n}\nexport class Price extends Amount {\n  currency = "EUR";\n}\n',
      members: "  @Step() async quote(n: number): Promise<Price> { const p = new Price(); p.cents = n * 100; return p; }",
    }),
  ),
  pair(
    "step result becomes a class whose getter is read",
    "types",
    src(around("    const y = await this.b(q.cents);").replace(A, `${A}\n    const q = await this.quote(input);`), { members: QUOTE }),
    src(around("    const y = await this.e(q.label.toUpperCase());").replace(A, `${A}\n    const q = await this.quote(input);`), {
      prelude: 'export class Price {\n  cents = 0;\n  get label(): string { return "eur" + String(this.cents); }\n}\n',
      members: `  @Step() async quote(n: number): Promise<Price> { const p = new Price(); p.cents = n * 100; return p; }\n${E_STEP}`,
    }),
  ),
  pair(
    "step result becomes a class rebuilt with @Step({ type })",
    "types",
    src(around("    const y = await this.b(q.cents);").replace(A, `${A}\n    const q = await this.quote(input);`), { members: QUOTE }),
    src(around("    const y = await this.b(q.doubled());").replace(A, `${A}\n    const q = await this.quote(input);`), {
      prelude: "export class Tariff {\n  cents = 0;\n  doubled(): number { return this.cents * 2; }\n}\n",
      members: "  @Step({ type: Tariff }) async quote(n: number): Promise<Tariff> { const p = new Tariff(); p.cents = n * 100; return p; }",
    }),
  ),
  pair(
    "step result changed from string to number, read through String()",
    "types",
    src(around("    const y = String(await this.b(2));")),
    src(around("    const y = String(await this.b(2));"), { bResult: "number", bBody: "return n * 10;" }),
  ),
  pair(
    "step result's element type changed and a method of it called",
    "types",
    src(around('    const y = (await this.parts(input)).join("-");'), {
      members: "  @Step() async parts(n: number): Promise<number[]> { return [n, n + 1]; }",
    }),
    src(around('    const y = (await this.parts(input)).map((p) => p.toUpperCase()).join("-");'), {
      members: "  @Step() async parts(n: number): Promise<string[]> { return [String(n), String(n + 1)]; }",
    }),
  ),
  pair(
    "step result widened to include null, which the code handles",
    "types",
    base,
    src(around('    const y = (await this.b(2)) ?? "none";'), { bResult: "string | null" }),
  ),

  // ---- other refactorings ----
  pair(
    "step and sleep extracted into a private helper",
    "refactor",
    base,
    src([A, GO, "    const y = await this.billAndWait();", C, RET].join("\n"), {
      members:
        '  private async billAndWait(): Promise<string> {\n    const y = await this.b(2);\n    await this.ctx.sleep("10s");\n    return y;\n  }',
    }),
  ),
  pair(
    "helper method inlined",
    "refactor",
    src(around("    const y = await this.bill();"), { members: "  private async bill(): Promise<string> { return this.b(2); }" }),
    base,
  ),
  pair(
    "inline step moved into a module function handed ctx",
    "refactor",
    src(around('    const y = await this.ctx.step("bill", async () => "bill2");')),
    src(around("    const y = await bill(this.ctx, 2);"), {
      imports: 'import { bill } from "./helpers.js";',
      modules: {
        "helpers.ts":
          'import type { Ctx } from "@fusee/runtime";\n\nexport function bill(ctx: Ctx, n: number): Promise<string> {\n  return ctx.step("bill", async () => "bill" + String(n));\n}\n',
      },
    }),
  ),
  pair(
    "step method renamed, its step name kept",
    "refactor",
    src(around("    const y = await this.e(2);"), { members: E_STEP }),
    src(around("    const y = await this.charge(2);"), {
      members:
        '  @Step({ name: "e" }) async charge(v: number | string, unit?: string): Promise<string> { return "e" + String(v) + (unit ?? ""); }',
    }),
  ),
  pair(
    ".then() chain rewritten with await",
    "refactor",
    src(around("    const y = await this.b(2).then((v) => this.d(v.length));")),
    src(around("    const first = await this.b(2);", "    const y = await this.d(first.length);")),
  ),
  pair(
    "Promise.all of two steps made sequential",
    "refactor",
    src(around("    const [y, w] = await Promise.all([this.b(2), this.d(4)]);", "    this.seen.push(w);")),
    src(around("    const y = await this.b(2);", "    const w = await this.d(4);", "    this.seen.push(w);")),
  ),
  pair(
    "Promise.all of two steps reordered",
    "refactor",
    src(around("    const [y, w] = await Promise.all([this.b(2), this.d(4)]);", "    this.seen.push(w);")),
    src(around("    const [w, y] = await Promise.all([this.d(4), this.b(2)]);", "    this.seen.push(w);")),
  ),
  pair(
    "try/catch added around a step",
    "refactor",
    base,
    src(around("    let y: string;", "    try {", "      y = await this.b(2);", "    } catch {", '      y = "none";', "    }")),
  ),
  pair(
    "ternary rewritten as if/else",
    "refactor",
    src(around("    const y = input > 5 ? await this.b(2) : await this.d(2);")),
    src(
      around(
        "    let y: string;",
        "    if (input > 5) {",
        "      y = await this.b(2);",
        "    } else {",
        "      y = await this.d(2);",
        "    }",
      ),
    ),
    [1, 7],
  ),
  pair(
    "switch rewritten as an if/else chain",
    "refactor",
    src(
      around(
        "    let y: string;",
        "    switch (input) {",
        "      case 1: y = await this.b(1); break;",
        "      case 2: y = await this.d(2); break;",
        "      default: y = await this.b(9);",
        "    }",
      ),
    ),
    src(
      around(
        "    let y: string;",
        "    if (input === 1) y = await this.b(1);",
        "    else if (input === 2) y = await this.d(2);",
        "    else y = await this.b(9);",
      ),
    ),
    [1, 2, 3],
  ),
  pair(
    "child workflow call moved into a helper",
    "refactor",
    src(around('    const k = await this.ctx.executeChild<number>("Child", "kid-1", 2);', "    const y = String(k);")),
    src(around("    const y = String(await this.kid());"), {
      members: '  private kid(): Promise<number> { return this.ctx.executeChild<number>("Child", "kid-1", 2); }',
    }),
  ),
  pair(
    "setAttributes moved into a helper",
    "refactor",
    src(around('    this.ctx.setAttributes({ stage: "bill" });', B)),
    src(around('    this.stage("bill");', B), {
      members: "  private stage(name: string): void { this.ctx.setAttributes({ stage: name }); }",
    }),
  ),
  pair(
    "retry loop put around a step that never failed",
    "refactor",
    base,
    src(
      around(
        '    let y = "";',
        "    for (let attempt = 0; attempt < 3; attempt++) {",
        "      try {",
        "        y = await this.b(2);",
        "        break;",
        "      } catch {",
        '        await this.ctx.sleep("1s");',
        "      }",
        "    }",
      ),
    ),
  ),
  pair(
    "step call wrapped in a local arrow function called once",
    "refactor",
    base,
    src(around("    const bill = () => this.b(2);", "    const y = await bill();")),
  ),
];
