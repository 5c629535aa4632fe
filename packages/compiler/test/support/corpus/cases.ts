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

function pair(name: string, kind: string, v1: WorkflowSource, v2: WorkflowSource): ChangePair {
  return { name, kind, v1, v2 };
}

export const CASES: readonly ChangePair[] = [
  // ---- steps inserted, removed, renamed, moved ----
  pair("step inserted before a wait", "step", base, src(edit({ [A]: `${A}\n    await this.d(9);` }))),
  pair("step inserted between waits", "step", base, src(edit({ [B]: `${B}\n    await this.d(9);` }))),
  pair("step removed before a wait", "step", base, src(edit({ [B]: "    const y = \"b2\";" }))),
  pair("step renamed", "step", base, src(edit({ [B]: "    const y = await this.d(2);" }))),
  pair("two steps reordered", "step", src(lines(A, B, GO, SLEEP, C, RET)), src(lines(B, A, GO, SLEEP, C, RET))),
  pair("step appended after the last wait", "after-last-wait", base, src(edit({ [C]: `${C}\n    await this.d(9);` }))),
  pair("step removed after the last wait", "after-last-wait", base, src(edit({ [C]: '    const z = "c3";' }))),
  pair("step moved after the last wait", "step", base, src(lines(A, GO, SLEEP, B, C, RET))),
  pair("inline step renamed", "step", src(edit({ [B]: '    const y = await this.ctx.step("price", async () => "p");' })), src(edit({ [B]: '    const y = await this.ctx.step("cost", async () => "p");' }))),
  pair("inline step's body changed", "harmless", src(edit({ [B]: '    const y = await this.ctx.step("price", async () => "p");' })), src(edit({ [B]: '    const y = await this.ctx.step("price", async () => "p" + String(input));' }))),
  pair("step implementation changed", "harmless", base, src(lines(...BASE), { bBody: 'return "B" + String(n * 2);' })),
  pair("step argument value changed", "harmless", base, src(edit({ [B]: "    const y = await this.b(input + 7);" }))),
  pair("local names and formatting changed", "harmless", base, src(lines("    const first = await this.a(input);", GO, "    const second = await this.b(1 + 1);", SLEEP, "    const third = await this.c(3);", '    return [first, second, third].join(",");'))),
  pair("code without durable calls added", "harmless", base, src(edit({ [B]: `    const note = String(input).padStart(3, "0");\n    this.seen.push(note);\n${B}` }))),
  pair("query added", "harmless", base, src(lines(...BASE), { members: "  @Query() count(): number { return this.seen.length; }" })),
  pair("update handler with a step added", "harmless", base, src(lines(...BASE), { members: '  @Update() async add(item: string): Promise<string> { return this.d(item.length); }', imports: 'import { Update } from "@fusee/runtime";' })),
  pair("step retry options changed", "harmless", base, src(lines(...BASE), { members: '  @Step({ name: "e", retry: RetryPolicy.none() }) async e(): Promise<void> {}', imports: 'import { RetryPolicy } from "@fusee/runtime";' })),
  pair("step in a private helper method inserted", "helper", src(edit({ [B]: "    const y = await this.pay();" }), { members: "  private async pay(): Promise<string> { return this.b(2); }" }), src(edit({ [B]: "    const y = await this.pay();" }), { members: "  private async pay(): Promise<string> { await this.d(1); return this.b(2); }" })),

  // ---- timers ----
  pair("sleep inserted before a step", "sleep", base, src(edit({ [A]: `${A}\n    await this.ctx.sleep("1s");` }))),
  pair("sleep removed between steps", "sleep", base, src(edit({ [SLEEP]: "" }))),
  pair("sleep duration changed", "harmless", base, src(edit({ [SLEEP]: '    await this.ctx.sleep("20s");' }))),
  pair("sleep appended after the last wait", "after-last-wait", base, src(edit({ [C]: `${C}\n    await this.ctx.sleep("5s");` }))),
  pair("sleep moved before a step", "sleep", base, src(lines(A, GO, SLEEP, B, C, RET))),
  pair("sleepUntil replaced by sleep", "harmless", src(edit({ [SLEEP]: "    await this.ctx.sleepUntil(this.ctx.now() + 10_000);" })), base),

  // ---- waits ----
  pair("waitFor inserted before a recorded step", "wait", base, src(edit({ [B]: `${GO}\n${B}` }))),
  pair("condition inserted before the first step", "wait", base, src(edit({ [A]: `    await this.ctx.condition(() => this.approved);\n${A}` }))),
  pair("condition with a new signal handler inserted", "wait", src(lines(...BASE)), src(edit({ [B]: `    await this.ctx.condition(() => this.seen.length > 0);\n${B}` }), { members: '  @Signal({ name: "note" }) note(text: string): void { this.seen.push(text); }' })),
  pair("timeout added to a waitFor", "wait", base, src(edit({ [GO]: '    await this.ctx.waitFor<number>("go", { timeout: "1d" });' }))),
  pair("timeout added to a condition", "wait", src(edit({ [GO]: "    await this.ctx.condition(() => this.approved);" })), src(edit({ [GO]: '    await this.ctx.condition(() => this.approved, { timeout: "1d" });' }))),
  pair("waitFor removed", "harmless", base, src(edit({ [GO]: "" }))),
  pair("waitFor timeout changed", "harmless", src(edit({ [GO]: '    await this.ctx.waitFor<number>("go", { timeout: "1d" });' })), src(edit({ [GO]: '    await this.ctx.waitFor<number>("go", { timeout: "2d" });' }))),
  pair("waitFor inserted after the last wait's steps", "after-last-wait", base, src(edit({ [C]: `${C}\n${GO}` }))),

  // ---- children ----
  pair("child workflow inserted", "child", base, src(edit({ [B]: `    await this.ctx.executeChild("Child", "kid-1", 2);\n${B}` }))),
  pair("child workflow ID changed", "child", src(edit({ [B]: `    await this.ctx.executeChild("Child", "kid-1", 2);\n${B}` })), src(edit({ [B]: `    await this.ctx.executeChild("Child", "kid-2", 2);\n${B}` }))),
  pair("child workflow input changed", "harmless", src(edit({ [B]: `    await this.ctx.executeChild("Child", "kid-1", 2);\n${B}` })), src(edit({ [B]: `    await this.ctx.executeChild("Child", "kid-1", 5);\n${B}` }))),
  pair("child workflow appended after the last wait", "after-last-wait", base, src(edit({ [C]: `${C}\n    await this.ctx.startChild("Child", "kid-9", 1, { close: "abandon" });` }))),

  // ---- attributes ----
  pair("setAttributes inserted", "attributes", base, src(edit({ [B]: `    this.ctx.setAttributes({ stage: "b" });\n${B}` }))),
  pair("setAttributes removed", "attributes", src(edit({ [B]: `    this.ctx.setAttributes({ stage: "b" });\n${B}` })), base),
  pair("setAttributes values changed", "harmless", src(edit({ [B]: `    this.ctx.setAttributes({ stage: "b" });\n${B}` })), src(edit({ [B]: `    this.ctx.setAttributes({ stage: "billing", at: 2 });\n${B}` }))),
];
