import type { ChangePair, WorkflowSource } from "./pair.js";

/**
 * The corpus: realistic before/after changes of one workflow, of every kind `fusee gen --check`
 * must judge. Whether a change breaks is not written here: the runtime decides (see judge.ts).
 *
 * The base workflow calls step a, waits for signal "go", calls b, sleeps, calls c and returns.
 */
const A = "    const x = await this.a(input);";
const GO = '    await this.ctx.waitFor<number>("go");';
const B = "    const y = await this.b(2);";
const SLEEP = '    await this.ctx.sleep("10s");';
const C = "    const z = await this.c(3);";
const RET = '    return [x, y, z].join(",");';
const BASE = [A, GO, B, SLEEP, C, RET];

function lines(...parts: string[]): string {
  return parts.join("\n");
}

function src(body: string, extra: Omit<WorkflowSource, "body"> = {}): WorkflowSource {
  return { body, ...extra };
}

/** The base body with `at` lines replaced by `by` (each an exact line of the base). */
function edit(edits: Readonly<Record<string, string>>): string {
  return BASE.map((l) => (l in edits ? (edits[l] as string) : l)).join("\n");
}

const base = src(lines(...BASE));

/** helpers.ts with a function handed ctx, which makes the calls `inner` adds. */
function HELPER(inner: string): string {
  return `import type { Ctx } from "@fusee/runtime";

export async function price(ctx: Ctx, n: number): Promise<string> {
${inner}  return ctx.step("price", async () => "p" + String(n));
}
`;
}

/** Pairs whose paths depend on the input are judged with inputs that take each path. */
const INPUTS: Readonly<Record<string, readonly number[]>> = {
  "branch condition changed": [1, 7, -1],
  "condition negated and arms swapped": [1, -1],
  "common step hoisted out of both arms": [1, -1],
  "early return turned into else": [1, -1],
  "step inserted in one arm of a branch": [1, -1],
  "condition changed in a branch without durable calls": [1, 7],
  "condition rewritten through a local alias": [1, -1],
  "switch cases reordered with the same calls": [1, 2, 3],
};

function pair(name: string, kind: string, v1: WorkflowSource, v2: WorkflowSource): ChangePair {
  const inputs = INPUTS[name];
  return { name, kind, v1, v2, ...(inputs === undefined ? {} : { inputs }) };
}

export const CASES: readonly ChangePair[] = [
  // ---- steps inserted, removed, renamed, moved ----
  pair("step inserted before a wait", "step", base, src(edit({ [A]: `${A}\n    await this.d(9);` }))),
  pair("step inserted between waits", "step", base, src(edit({ [B]: `${B}\n    await this.d(9);` }))),
  pair("step removed before a wait", "step", base, src(edit({ [B]: '    const y = "b2";' }))),
  pair("step renamed", "step", base, src(edit({ [B]: "    const y = await this.d(2);" }))),
  pair("two steps reordered", "step", src(lines(A, B, GO, SLEEP, C, RET)), src(lines(B, A, GO, SLEEP, C, RET))),
  pair("step appended after the last wait", "after-last-wait", base, src(edit({ [C]: `${C}\n    await this.d(9);` }))),
  pair("step removed after the last wait", "after-last-wait", base, src(edit({ [C]: '    const z = "c3";' }))),
  pair("step moved after the last wait", "step", base, src(lines(A, GO, SLEEP, B, C, RET))),
  pair(
    "inline step renamed",
    "step",
    src(edit({ [B]: '    const y = await this.ctx.step("price", async () => "p");' })),
    src(edit({ [B]: '    const y = await this.ctx.step("cost", async () => "p");' })),
  ),
  pair(
    "inline step's body changed",
    "harmless",
    src(edit({ [B]: '    const y = await this.ctx.step("price", async () => "p");' })),
    src(edit({ [B]: '    const y = await this.ctx.step("price", async () => "p" + String(input));' })),
  ),
  pair("step implementation changed", "harmless", base, src(lines(...BASE), { bBody: 'return "B" + String(n * 2);' })),
  pair("step argument value changed", "harmless", base, src(edit({ [B]: "    const y = await this.b(input + 7);" }))),
  pair(
    "local names and formatting changed",
    "harmless",
    base,
    src(
      lines(
        "    const first = await this.a(input);",
        GO,
        "    const second = await this.b(1 + 1);",
        SLEEP,
        "    const third = await this.c(3);",
        '    return [first, second, third].join(",");',
      ),
    ),
  ),
  pair(
    "code without durable calls added",
    "harmless",
    base,
    src(edit({ [B]: `    const note = String(input).padStart(3, "0");\n    this.seen.push(note);\n${B}` })),
  ),
  pair("query added", "harmless", base, src(lines(...BASE), { members: "  @Query() count(): number { return this.seen.length; }" })),
  pair(
    "update handler with a step added",
    "harmless",
    base,
    src(lines(...BASE), {
      members: "  @Update() async add(item: string): Promise<string> { return this.d(item.length); }",
      imports: 'import { Update } from "@fusee/runtime";',
    }),
  ),
  pair(
    "step retry options changed",
    "harmless",
    base,
    src(lines(...BASE), {
      members: '  @Step({ name: "e", retry: RetryPolicy.none() }) async e(): Promise<void> {}',
      imports: 'import { RetryPolicy } from "@fusee/runtime";',
    }),
  ),
  pair(
    "step in a private helper method inserted",
    "helper",
    src(edit({ [B]: "    const y = await this.pay();" }), { members: "  private async pay(): Promise<string> { return this.b(2); }" }),
    src(edit({ [B]: "    const y = await this.pay();" }), {
      members: "  private async pay(): Promise<string> { await this.d(1); return this.b(2); }",
    }),
  ),

  // ---- timers ----
  pair("sleep inserted before a step", "sleep", base, src(edit({ [A]: `${A}\n    await this.ctx.sleep("1s");` }))),
  pair("sleep removed between steps", "sleep", base, src(edit({ [SLEEP]: "" }))),
  pair("sleep duration changed", "harmless", base, src(edit({ [SLEEP]: '    await this.ctx.sleep("20s");' }))),
  pair("sleep appended after the last wait", "after-last-wait", base, src(edit({ [C]: `${C}\n    await this.ctx.sleep("5s");` }))),
  pair("sleep moved before a step", "sleep", base, src(lines(A, GO, SLEEP, B, C, RET))),
  pair("sleepUntil replaced by sleep", "harmless", src(edit({ [SLEEP]: "    await this.ctx.sleepUntil(this.ctx.now() + 10_000);" })), base),

  // ---- waits ----
  pair("waitFor inserted before a recorded step", "wait", base, src(edit({ [B]: `${GO}\n${B}` }))),
  pair(
    "condition inserted before the first step",
    "wait",
    base,
    src(edit({ [A]: `    await this.ctx.condition(() => this.approved);\n${A}` })),
  ),
  pair(
    "condition with a new signal handler inserted",
    "wait",
    src(lines(...BASE)),
    src(edit({ [B]: `    await this.ctx.condition(() => this.seen.length > 0);\n${B}` }), {
      members: '  @Signal({ name: "note" }) note(text: string): void { this.seen.push(text); }',
    }),
  ),
  pair("timeout added to a waitFor", "wait", base, src(edit({ [GO]: '    await this.ctx.waitFor<number>("go", { timeout: "1d" });' }))),
  pair(
    "timeout added to a condition",
    "wait",
    src(edit({ [GO]: "    await this.ctx.condition(() => this.approved);" })),
    src(edit({ [GO]: '    await this.ctx.condition(() => this.approved, { timeout: "1d" });' })),
  ),
  pair("waitFor removed", "harmless", base, src(edit({ [GO]: "" }))),
  pair(
    "waitFor timeout changed",
    "harmless",
    src(edit({ [GO]: '    await this.ctx.waitFor<number>("go", { timeout: "1d" });' })),
    src(edit({ [GO]: '    await this.ctx.waitFor<number>("go", { timeout: "2d" });' })),
  ),
  pair("waitFor inserted after the last wait's steps", "after-last-wait", base, src(edit({ [C]: `${C}\n${GO}` }))),

  // ---- children ----
  pair("child workflow inserted", "child", base, src(edit({ [B]: `    await this.ctx.executeChild("Child", "kid-1", 2);\n${B}` }))),
  pair(
    "child workflow ID changed",
    "child",
    src(edit({ [B]: `    await this.ctx.executeChild("Child", "kid-1", 2);\n${B}` })),
    src(edit({ [B]: `    await this.ctx.executeChild("Child", "kid-2", 2);\n${B}` })),
  ),
  pair(
    "child workflow input changed",
    "harmless",
    src(edit({ [B]: `    await this.ctx.executeChild("Child", "kid-1", 2);\n${B}` })),
    src(edit({ [B]: `    await this.ctx.executeChild("Child", "kid-1", 5);\n${B}` })),
  ),
  pair(
    "child workflow appended after the last wait",
    "after-last-wait",
    base,
    src(edit({ [C]: `${C}\n    await this.ctx.startChild("Child", "kid-9", 1, { close: "abandon" });` })),
  ),

  // ---- attributes ----
  pair("setAttributes inserted", "attributes", base, src(edit({ [B]: `    this.ctx.setAttributes({ stage: "b" });\n${B}` }))),
  pair("setAttributes removed", "attributes", src(edit({ [B]: `    this.ctx.setAttributes({ stage: "b" });\n${B}` })), base),
  pair(
    "setAttributes values changed",
    "harmless",
    src(edit({ [B]: `    this.ctx.setAttributes({ stage: "b" });\n${B}` })),
    src(edit({ [B]: `    this.ctx.setAttributes({ stage: "billing", at: 2 });\n${B}` })),
  ),

  // ---- branches and path conditions ----
  pair(
    "branch condition changed",
    "condition",
    src(edit({ [B]: '    const y = input > 0 ? await this.b(2) : "none";' })),
    src(edit({ [B]: '    const y = input > 5 ? await this.b(2) : "none";' })),
  ),
  pair(
    "loop bound changed",
    "condition",
    src(edit({ [B]: '    let y = "";\n    for (let i = 0; i < 2; i++) y += await this.b(i);' })),
    src(edit({ [B]: '    let y = "";\n    for (let i = 0; i < 3; i++) y += await this.b(i);' })),
  ),
  pair(
    "condition negated and arms swapped",
    "harmless",
    src(edit({ [B]: "    let y: string;\n    if (input > 0) y = await this.b(2);\n    else y = await this.d(2);" })),
    src(edit({ [B]: "    let y: string;\n    if (input <= 0) y = await this.d(2);\n    else y = await this.b(2);" })),
  ),
  pair(
    "common step hoisted out of both arms",
    "harmless",
    src(
      edit({
        [B]: "    let y: string;\n    if (input > 0) { await this.d(1); y = await this.b(2); }\n    else { await this.d(1); y = await this.c(2); }",
      }),
    ),
    src(edit({ [B]: "    await this.d(1);\n    const y = input > 0 ? await this.b(2) : await this.c(2);" })),
  ),
  pair(
    "early return turned into else",
    "harmless",
    src(lines(A, GO, '    if (input < 0) return "negative";', B, SLEEP, C, RET)),
    src(lines(A, GO, "    if (input >= 0) {", B, SLEEP, C, RET, "    } else {", '      return "negative";', "    }")),
  ),
  pair(
    "step inserted in one arm of a branch",
    "condition",
    src(edit({ [B]: '    const y = input > 0 ? await this.b(2) : "none";' })),
    src(edit({ [B]: '    const y = input > 0 ? (await this.d(1)) + (await this.b(2)) : "none";' })),
  ),
  pair(
    "condition changed in a branch without durable calls",
    "harmless",
    src(edit({ [B]: `${B}\n    if (input > 0) this.seen.push("p");` })),
    src(edit({ [B]: `${B}\n    if (input > 9) this.seen.push("p");` })),
  ),
  pair(
    "step inserted into a loop body",
    "step",
    src(edit({ [B]: '    let y = "";\n    for (let i = 0; i < 2; i++) y += await this.b(i);' })),
    src(edit({ [B]: '    let y = "";\n    for (let i = 0; i < 2; i++) { y += await this.b(i); await this.d(i); }' })),
  ),
  pair(
    "step inserted in a finally block",
    "step",
    src(edit({ [B]: '    let y = "";\n    try { y = await this.b(2); } finally { this.seen.push("f"); }' })),
    src(edit({ [B]: '    let y = "";\n    try { y = await this.b(2); } finally { await this.d(1); }' })),
  ),

  // ---- patches ----
  pair(
    "step inserted under a new patch",
    "harmless",
    base,
    src(edit({ [B]: `    if (this.ctx.patched("audit")) await this.d(1);\n${B}` }), { patches: ["audit"] }),
  ),
  pair(
    "step replaced under a new patch",
    "harmless",
    base,
    src(edit({ [B]: '    const y = this.ctx.patched("bill-d") ? await this.d(2) : await this.b(2);' }), { patches: ["bill-d"] }),
  ),
  pair(
    "patch guard with one step in both arms removed",
    "patch",
    src(edit({ [B]: '    const y = this.ctx.patched("double") ? await this.b(4) : await this.b(2);' }), { patches: ["double"] }),
    src(edit({ [B]: "    const y = await this.b(4);" }), { patches: ["double"] }),
  ),
  pair(
    "patch guard replaced by deprecatePatch",
    "harmless",
    src(edit({ [B]: '    const y = this.ctx.patched("double") ? await this.b(4) : await this.b(2);' }), { patches: ["double"] }),
    src(edit({ [B]: '    this.ctx.deprecatePatch("double");\n    const y = await this.b(4);' }), { patches: ["double"] }),
  ),
  pair(
    "patch ID renamed",
    "patch",
    src(edit({ [B]: `    if (this.ctx.patched("audit")) await this.d(1);\n${B}` }), { patches: ["audit"] }),
    src(edit({ [B]: `    if (this.ctx.patched("audit-v2")) await this.d(1);\n${B}` }), { patches: ["audit-v2"] }),
  ),
  pair(
    "recorded patch ID reused for a second change",
    "patch",
    src(edit({ [B]: `    if (this.ctx.patched("audit")) await this.d(1);\n${B}` }), { patches: ["audit"] }),
    src(
      edit({
        [B]: `    if (this.ctx.patched("audit")) await this.d(1);\n${B}`,
        [C]: `    if (this.ctx.patched("audit")) await this.d(5);\n${C}`,
      }),
      { patches: ["audit"] },
    ),
  ),

  // ---- helpers and modules ----
  pair(
    "step inserted in an imported helper handed ctx",
    "helper",
    src(edit({ [B]: "    const y = await price(this.ctx, 2);" }), {
      imports: 'import { price } from "./helpers.js";',
      modules: { "helpers.ts": HELPER("") },
    }),
    src(edit({ [B]: "    const y = await price(this.ctx, 2);" }), {
      imports: 'import { price } from "./helpers.js";',
      modules: { "helpers.ts": HELPER('  await ctx.step("audit", async () => 1);\n') },
    }),
  ),
  pair(
    "sleep inserted in an imported helper handed ctx",
    "helper",
    src(edit({ [B]: "    const y = await price(this.ctx, 2);" }), {
      imports: 'import { price } from "./helpers.js";',
      modules: { "helpers.ts": HELPER("") },
    }),
    src(edit({ [B]: "    const y = await price(this.ctx, 2);" }), {
      imports: 'import { price } from "./helpers.js";',
      modules: { "helpers.ts": HELPER('  await ctx.sleep("1s");\n') },
    }),
  ),
  pair(
    "imported helper's computation changed",
    "harmless",
    src(edit({ [B]: "    const y = await price(this.ctx, 2);" }), {
      imports: 'import { price } from "./helpers.js";',
      modules: { "helpers.ts": HELPER("") },
    }),
    src(edit({ [B]: "    const y = await price(this.ctx, 2);" }), {
      imports: 'import { price } from "./helpers.js";',
      modules: { "helpers.ts": HELPER("  const unused = n * 3;\n  void unused;\n") },
    }),
  ),
  pair(
    "step name constant changed in another module",
    "helper",
    src(edit({ [B]: '    const y = await this.ctx.step(NAMES.price, async () => "p");' }), {
      imports: 'import { NAMES } from "./names.js";',
      modules: { "names.ts": 'export const NAMES = { price: "price" };\n' },
    }),
    src(edit({ [B]: '    const y = await this.ctx.step(NAMES.price, async () => "p");' }), {
      imports: 'import { NAMES } from "./names.js";',
      modules: { "names.ts": 'export const NAMES = { price: "price-v2" };\n' },
    }),
  ),
  pair(
    "another name of the constant module changed",
    "harmless",
    src(edit({ [B]: '    const y = await this.ctx.step(NAMES.price, async () => "p");' }), {
      imports: 'import { NAMES } from "./names.js";',
      modules: { "names.ts": 'export const NAMES = { price: "price", ship: "ship" };\n' },
    }),
    src(edit({ [B]: '    const y = await this.ctx.step(NAMES.price, async () => "p");' }), {
      imports: 'import { NAMES } from "./names.js";',
      modules: { "names.ts": 'export const NAMES = { price: "price", ship: "ship-v2" };\n' },
    }),
  ),

  // ---- types ----
  pair("step parameter type changed", "types", base, src(lines(...BASE), { aParams: "n: number | string" })),
  pair("step result type widened", "types", base, src(lines(...BASE), { bResult: "string | number" })),
  pair(
    "step result type became a class whose method is called",
    "types",
    src(edit({ [B]: "    const y = String((await this.b(2)).cents);" }), { bResult: "{ cents: number }", bBody: "return { cents: n };" }),
    src(edit({ [B]: "    const y = String((await this.b(2)).plus(1));" }), { bResult: "Money", bBody: "return new Money(n);" }),
  ),
  pair(
    "step result type changed and used as the new type",
    "types",
    base,
    src(edit({ [B]: "    const y = (await this.b(2)).toFixed(1);" }), { bResult: "number", bBody: "return n;" }),
  ),

  // ---- arguments ----
  pair(
    "two calls of one step swapped",
    "swap",
    src(lines(A, "    const w = await this.a(input + 1);", GO, B, SLEEP, C, '    return [x, w, y, z].join(",");')),
    src(lines("    const w = await this.a(input + 1);", A, GO, B, SLEEP, C, '    return [x, w, y, z].join(",");')),
  ),

  // ---- the workflow itself ----
  pair("workflow class renamed, type name kept", "harmless", base, src(lines(...BASE), { className: "Flow2", typeName: "Flow" })),
  pair("workflow type name changed", "workflow", base, src(lines(...BASE), { typeName: "Flow2" })),

  // ---- harder cases: the same calls in another form, and forms that only look alike ----
  pair(
    "condition rewritten through a local alias",
    "harmless",
    src(edit({ [B]: '    const y = input > 0 ? await this.b(2) : "none";' })),
    src(edit({ [B]: '    const amount = input;\n    const y = amount > 0 ? await this.b(2) : "none";' })),
  ),
  pair(
    "for loop rewritten as while with the same bound",
    "harmless",
    src(edit({ [B]: '    let y = "";\n    for (let i = 0; i < 2; i++) y += await this.b(i);' })),
    src(edit({ [B]: '    let y = "";\n    let i = 0;\n    while (i < 2) { y += await this.b(i); i++; }' })),
  ),
  pair(
    "sleep replaced by a condition with a timeout",
    "wait",
    base,
    src(edit({ [SLEEP]: '    await this.ctx.condition(() => this.approved, { timeout: "10s" });' })),
  ),
  pair(
    "timeout added to a child workflow",
    "child",
    src(edit({ [B]: `    await this.ctx.executeChild("Child", "kid-1", 2);\n${B}` })),
    src(edit({ [B]: `    await this.ctx.executeChild("Child", "kid-1", 2, { timeout: "1d" });\n${B}` })),
  ),
  pair(
    "setAttributes moved after a step",
    "attributes",
    src(edit({ [B]: `    this.ctx.setAttributes({ stage: "b" });\n${B}` })),
    src(edit({ [B]: `${B}\n    this.ctx.setAttributes({ stage: "b" });` })),
  ),
  pair("step parameter type narrowed", "types", base, src(lines(...BASE), { aParams: "n: 0 | 1 | 2 | 3" })),
  pair(
    "switch cases reordered with the same calls",
    "harmless",
    src(
      edit({
        [B]: '    let y = "";\n    switch (input) {\n      case 1: y = await this.b(1); break;\n      case 2: y = await this.c(2); break;\n      default: y = await this.d(3);\n    }',
      }),
    ),
    src(
      edit({
        [B]: '    let y = "";\n    switch (input) {\n      case 2: y = await this.c(2); break;\n      case 1: y = await this.b(1); break;\n      default: y = await this.d(3);\n    }',
      }),
    ),
  ),
];
