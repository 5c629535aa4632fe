import type { ChangePair, WorkflowSource } from "./pair.js";

/**
 * A third corpus, written once the rules of `fusee gen --check` were done and left as it was judged:
 * its figures say how the rules do on changes they were not shaped by. Whether a change breaks is
 * not written here: the runtime decides (see judge.ts).
 */
const A = "    const x = await this.a(input);";
const GO = '    await this.ctx.waitFor<number>("go");';
const SLEEP = '    await this.ctx.sleep("10s");';
const C = "    const z = await this.c(3);";
const RET = '    return [x, y, z].join(",");';
const B = "    const y = await this.b(2);";

function around(...middle: string[]): string {
  return [A, GO, ...middle, SLEEP, C, RET].join("\n");
}

function src(body: string, extra: Omit<WorkflowSource, "body"> = {}): WorkflowSource {
  return { body, ...extra };
}

function pair(name: string, kind: string, v1: WorkflowSource, v2: WorkflowSource, inputs?: readonly number[]): ChangePair {
  return { name, kind, v1, v2, ...(inputs === undefined ? {} : { inputs }) };
}

const QUOTE = "  @Step() async quote(n: number): Promise<{ cents: number }> { return { cents: n * 100 }; }";
const E_STEP = '  @Step() async e(v: number, unit?: string): Promise<string> { return "e" + String(v) + (unit ?? ""); }';
const base = src(around(B));

export const UNSEEN: readonly ChangePair[] = [
  pair(
    "destructured step result renamed",
    "arguments",
    src(around("    const { cents } = await this.quote(input);", "    const y = await this.b(cents);"), { members: QUOTE }),
    src(around("    const { cents: amount } = await this.quote(input);", "    const y = await this.b(amount);"), { members: QUOTE }),
  ),
  pair(
    "variable holding a step result renamed",
    "arguments",
    src(around("    const q = await this.quote(input);", "    const y = await this.b(q.cents);"), { members: QUOTE }),
    src(around("    const quote = await this.quote(input);", "    const y = await this.b(quote.cents);"), { members: QUOTE }),
  ),
  pair(
    "identical arms of a branch collapsed",
    "branch",
    src(around("    let y: string;", "    if (input > 5) y = await this.b(2);", "    else y = await this.b(2);")),
    base,
    [1, 7],
  ),
  pair(
    "step added after a loop, before the sleep",
    "step",
    src(around('    let y = "";', "    for (let i = 0; i < 2; i++) y += await this.b(i);")),
    src(around('    let y = "";', "    for (let i = 0; i < 2; i++) y += await this.b(i);", "    await this.d(5);")),
  ),
  pair(
    "continue in a counted loop rewritten as a list of the indexes kept",
    "loop",
    src(
      around(
        '    let y = "";',
        "    for (let i = 0; i < 3; i++) {",
        "      if (i === 1) continue;",
        "      y += await this.b(i);",
        "    }",
      ),
    ),
    src(around('    let y = "";', "    for (const i of [0, 2]) y += await this.b(i);")),
  ),
  pair(
    "step moved from before the wait to after it",
    "step",
    src([A, B, GO, SLEEP, C, RET].join("\n")),
    src([A, GO, B, SLEEP, C, RET].join("\n")),
  ),
  pair(
    "search attributes computed another way",
    "attributes",
    src(around('    this.ctx.setAttributes({ stage: "bill", n: input });', B)),
    src(around('    this.ctx.setAttributes({ stage: ["b", "i", "l", "l"].join(""), n: input * 1 });', B)),
  ),
  pair(
    "sleep duration taken from a constant",
    "sleep",
    base,
    src([A, GO, B, "    await this.ctx.sleep(PAUSE);", C, RET].join("\n"), { prelude: 'const PAUSE = "10s";\n' }),
  ),
  pair(
    "argument wrapped in Number()",
    "arguments",
    src(around("    const y = await this.b(input);")),
    src(around("    const y = await this.b(Number(input));")),
  ),
  pair(
    "argument input * 2 written input + input",
    "arguments",
    src(around("    const y = await this.b(input * 2);")),
    src(around("    const y = await this.b(input + input);")),
  ),
  pair(
    "helper method turned into an arrow function property",
    "refactor",
    src(around("    const y = await this.bill();"), { members: "  private async bill(): Promise<string> { return this.b(2); }" }),
    src(around("    const y = await this.bill();"), { members: "  private readonly bill = (): Promise<string> => this.b(2);" }),
  ),
  pair(
    "undefined passed for an optional argument",
    "arguments",
    src(around("    const y = await this.e(2);"), { members: E_STEP }),
    src(around("    const y = await this.e(2, undefined);"), { members: E_STEP }),
  ),
  pair(
    "wait made conditional on the input, which runs in flight meet",
    "wait",
    base,
    src([A, '    if (input > 0) await this.ctx.waitFor<number>("go");', B, SLEEP, C, RET].join("\n")),
  ),
  pair(
    "two waits for signals sent together swapped",
    "wait",
    src([A, GO, "    await this.ctx.condition(() => this.approved);", B, SLEEP, C, RET].join("\n")),
    src([A, "    await this.ctx.condition(() => this.approved);", GO, B, SLEEP, C, RET].join("\n")),
  ),
  pair(
    "inline step named through a constant of the same value",
    "refactor",
    src(around('    const y = await this.ctx.step("price", async () => "p");')),
    src(around('    const y = await this.ctx.step(PRICE, async () => "p");'), { prelude: 'const PRICE = "price";\n' }),
  ),
  pair(
    "default case of a switch moved first",
    "branch",
    src(
      around(
        "    let y: string;",
        "    switch (input) {",
        "      case 1: y = await this.b(1); break;",
        "      default: y = await this.d(9);",
        "    }",
      ),
    ),
    src(
      around(
        "    let y: string;",
        "    switch (input) {",
        "      default: y = await this.d(9); break;",
        "      case 1: y = await this.b(1);",
        "    }",
      ),
    ),
    [1, 2],
  ),
  pair(
    "step inserted two helpers deep",
    "helper",
    src(around("    const y = await this.outer();"), {
      members:
        "  private outer(): Promise<string> { return this.inner(); }\n  private async inner(): Promise<string> { return this.b(2); }",
    }),
    src(around("    const y = await this.outer();"), {
      members:
        "  private outer(): Promise<string> { return this.inner(); }\n  private async inner(): Promise<string> { await this.d(1); return this.b(2); }",
    }),
  ),
  pair(
    "child workflow's input computed another way",
    "child",
    src(around('    const k = await this.ctx.executeChild<number>("Child", "kid-1", 2);', "    const y = String(k);")),
    src(around('    const k = await this.ctx.executeChild<number>("Child", "kid-1", 1 + 1);', "    const y = String(k);")),
  ),
  pair(
    "two steps after the last wait swapped",
    "after-last-wait",
    src([A, GO, B, SLEEP, C, "    await this.d(4);", RET].join("\n")),
    src([A, GO, B, SLEEP, "    await this.d(4);", C, RET].join("\n")),
  ),
  pair(
    "argument chosen by the input changed on one side",
    "arguments",
    src(around("    const y = await this.b(input > 5 ? 1 : 2);")),
    src(around("    const y = await this.b(input > 5 ? 1 : 3);")),
    [1, 7],
  ),
  pair(
    "step result changed from string to number, read in a template",
    "types",
    src(around("    const y = `${await this.b(2)}!`;")),
    src(around("    const y = `${await this.b(2)}!`;"), { bResult: "number", bBody: "return n * 10;" }),
  ),
  pair(
    "return await in a helper written as return",
    "refactor",
    src(around("    const y = await this.bill();"), { members: "  private async bill(): Promise<string> { return await this.b(2); }" }),
    src(around("    const y = await this.bill();"), { members: "  private bill(): Promise<string> { return this.b(2); }" }),
  ),
  pair(
    "step call moved into a for loop of one iteration",
    "loop",
    base,
    src(around('    let y = "";', "    for (const n of [2]) y = await this.b(n);")),
  ),
  pair(
    "loop over the input's digits turned into a fixed loop",
    "loop",
    src(around('    let y = "";', "    for (const ch of String(input)) y += await this.b(Number(ch));")),
    src(around('    let y = "";', "    for (let i = 0; i < 1; i++) y += await this.b(input);")),
    [1, 5],
  ),
  pair(
    "signal handler that sets the condition's field renamed and rewritten",
    "signal",
    src([A, "    await this.ctx.condition(() => this.approved);", B, SLEEP, C, RET].join("\n")),
    src([A, "    await this.ctx.condition(() => this.approved);", B, SLEEP, C, RET].join("\n"), {
      signals:
        '  @Signal({ name: "approve" }) setApproval(value: boolean): void { this.setApproved(value); }\n  private setApproved(v: boolean): void { this.approved = v; }',
    }),
  ),
];
