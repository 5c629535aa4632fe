import { ts } from "ts-morph";
import { flat, GIVE_UP, MAX_UNROLLED, type Seq, text, type Where } from "./flow-shapes.js";
import type { FlowNode, SourceLocation } from "./ir.js";
import { type Env, type Evaluator, writtenSymbols } from "./known-values.js";

/** What reading a loop needs of the flow reader: statements, expressions and what they write. */
export interface StatementReader {
  readonly evaluator: Evaluator;
  statementSeq(s: ts.Statement, env: Env, where: Where): Seq;
  node(n: ts.Node, env: Env): FlowNode[];
  declarations(list: ts.VariableDeclarationList, env: Env): FlowNode[];
  applyIncrement(e: ts.Expression, env: Env): void;
}

/**
 * Reads loops: a loop whose iterations gen can count from what it knows (a counter from a literal to
 * a literal, a constant list) as its iterations one after the other, each read with the values of
 * that iteration; any other as a loop node whose body runs any number of times.
 */
export class LoopReader {
  constructor(private readonly reader: StatementReader) {}

  /** A loop: its iterations one by one when gen can count them, else a loop node run any number of times. */
  read(s: ts.IterationStatement, env: Env, where: Where, at: SourceLocation): Seq {
    const attempt = env.clone();
    try {
      const unrolled = this.unroll(s, attempt);
      if (unrolled !== undefined) {
        env.assign(attempt);
        return unrolled;
      }
    } catch (e) {
      if (e !== GIVE_UP) throw e;
    }
    return this.genericLoop(s, env, at);
  }

  private unroll(s: ts.IterationStatement, env: Env): Seq | undefined {
    const out: FlowNode[] = [];
    const iteration: Where = { loop: "unrolled" };
    const run = (): "again" | "stop" | Seq => {
      const body = this.reader.statementSeq(s.statement, env, iteration);
      out.push(...body.nodes);
      if (body.exits === "break") return "stop";
      if (body.exits === "return") return { nodes: out, exits: "return" };
      return "again";
    };
    const holds = (condition: ts.Expression | undefined): boolean | undefined => {
      if (condition === undefined) return true;
      const v = this.reader.evaluator.value(condition, env);
      return v.known ? Boolean(v.value) : undefined;
    };
    if (ts.isForOfStatement(s)) {
      const items = this.reader.evaluator.value(s.expression, env);
      if (!items.known || !Array.isArray(items.value) || items.value.length > MAX_UNROLLED) return undefined;
      const declaration = ts.isVariableDeclarationList(s.initializer) ? s.initializer.declarations[0] : undefined;
      if (declaration === undefined || !ts.isIdentifier(declaration.name)) return undefined;
      const symbol = this.reader.evaluator.symbolOf(declaration.name);
      out.push(...this.reader.node(s.expression, env));
      for (const item of items.value as readonly unknown[]) {
        env.set(symbol, { kind: "value", value: item as never });
        const r = run();
        if (r === "stop") break;
        if (r !== "again") return r;
      }
      return { nodes: out, exits: false };
    }
    if (ts.isForInStatement(s)) return undefined;
    if (ts.isForStatement(s) && s.initializer !== undefined) {
      if (ts.isVariableDeclarationList(s.initializer)) out.push(...this.reader.declarations(s.initializer, env));
      else {
        out.push(...this.reader.node(s.initializer, env));
        this.reader.applyIncrement(s.initializer, env);
      }
    }
    const condition = ts.isForStatement(s) ? s.condition : (s as ts.WhileStatement | ts.DoStatement).expression;
    // Only a loop whose condition reads nothing its body leaves unknown can be counted.
    for (let i = 0; i <= MAX_UNROLLED; i++) {
      if (!ts.isDoStatement(s) || i > 0) {
        const h = holds(condition);
        if (h === undefined) return undefined;
        if (!h) return { nodes: out, exits: false };
      }
      if (i === MAX_UNROLLED) return undefined;
      const r = run();
      if (r === "stop") return { nodes: out, exits: false };
      if (r !== "again") return r;
      if (ts.isForStatement(s) && s.incrementor !== undefined) this.reader.applyIncrement(s.incrementor, env);
    }
    return undefined;
  }

  private genericLoop(s: ts.IterationStatement, env: Env, at: SourceLocation): Seq {
    const generic: Where = { loop: "generic" };
    const forget = () => env.forget(writtenSymbols(s, (n) => this.reader.evaluator.symbolOf(n)));
    // Whether the condition holds before the first iteration, on every path: such a loop runs at least once.
    const enters = (condition: ts.Expression | undefined) => {
      const v = condition === undefined ? { known: true, value: true } : this.reader.evaluator.value(condition, env);
      return v.known && Boolean(v.value) ? { entered: true } : {};
    };
    if (ts.isForStatement(s)) {
      const init =
        s.initializer === undefined
          ? []
          : ts.isVariableDeclarationList(s.initializer)
            ? this.reader.declarations(s.initializer, env)
            : this.reader.node(s.initializer, env);
      const entered = enters(s.condition);
      forget();
      const condition = s.condition === undefined ? [] : this.reader.node(s.condition, env);
      const step = s.incrementor === undefined ? [] : this.reader.node(s.incrementor, env);
      const over = [s.initializer, s.condition, s.incrementor].map((e) => (e === undefined ? "" : text(e))).join("; ");
      const body = this.reader.statementSeq(s.statement, env.clone(), generic);
      return flat([...init, ...condition, { kind: "loop", at, body: [...body.nodes, ...step, ...condition], over, ...entered }]);
    }
    const entered = ts.isWhileStatement(s) ? enters(s.expression) : {};
    forget();
    if (ts.isForOfStatement(s) || ts.isForInStatement(s)) {
      const over = `${text(s.initializer)} ${ts.isForOfStatement(s) ? "of" : "in"} ${text(s.expression)}`;
      const items = this.reader.node(s.expression, env);
      return flat([...items, { kind: "loop", at, body: this.reader.statementSeq(s.statement, env.clone(), generic).nodes, over }]);
    }
    const expression = (s as ts.WhileStatement | ts.DoStatement).expression;
    const condition = this.reader.node(expression, env);
    if (ts.isWhileStatement(s)) {
      return flat([
        ...condition,
        {
          kind: "loop",
          at,
          body: [...this.reader.statementSeq(s.statement, env.clone(), generic).nodes, ...condition],
          over: text(expression),
          ...entered,
        },
      ]);
    }
    const once = [...this.reader.statementSeq(s.statement, env.clone(), generic).nodes, ...condition];
    return flat([...once, { kind: "loop", at, body: once, over: text(expression) }]);
  }
}
