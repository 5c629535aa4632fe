/*
 * The input and result types of a workflow, read from its `run` method, so that everything that
 * starts or continues a run (engine.start, ctx.startChild, ctx.startWorkflow, ctx.continueAsNew)
 * checks its input against the class at compile time.
 */

/** The instance type of a workflow class, or the type itself when it is already an instance. */
type InstanceOf<W> = W extends abstract new (...args: any[]) => infer T ? T : W;

/** What a workflow's `run` takes (`undefined` when it takes nothing). */
export type WorkflowInput<W> = InstanceOf<W> extends { run(...args: infer A): unknown } ? (A extends [] ? undefined : A[0]) : unknown;

/** What a workflow's run resolves with. */
export type WorkflowOutput<W> = InstanceOf<W> extends { run(...args: any[]): infer O } ? Awaited<O> : unknown;

/**
 * A workflow's input as an argument list followed by `Rest`: required when `run` requires it,
 * optional when `run` takes nothing or an optional input, and anything when the type is not known.
 */
export type InputArgs<W, Rest extends unknown[] = []> = unknown extends W
  ? [input?: unknown, ...rest: Rest]
  : InstanceOf<W> extends { run(...args: infer A): unknown }
    ? A extends []
      ? [input?: undefined, ...rest: Rest]
      : [] extends A
        ? [input?: A[0], ...rest: Rest]
        : [input: A[0], ...rest: Rest]
    : [input?: unknown, ...rest: Rest];
