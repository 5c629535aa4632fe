import type { SourceLocation } from "./ir.js";

/**
 * Every error `fusee gen` throws derives from {@link GenError} and carries a stable `code`, so tools
 * can branch on `err.code` instead of parsing messages. Messages name `file:line` and the fix.
 *
 * @example
 * try { await generate({ project: "." }); }
 * catch (e) { if (e instanceof BreakingChangeError) for (const c of e.changes) console.log(c.message); }
 */
export class GenError extends Error {
  /** A stable identifier of the error kind, for example `"FUSEE_GEN_CONFIG"`. */
  readonly code: string = "FUSEE_GEN";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The project or fusee.config.json cannot be read, or an option is invalid. */
export class GenConfigError extends GenError {
  override readonly code: string = "FUSEE_GEN_CONFIG";
}

/** fusee.lock.json exists but is not a lock this version of fusee can read. */
export class LockFileError extends GenError {
  override readonly code: string = "FUSEE_GEN_LOCK";
}

/** Stable codes of the problems found in workflow source. */
export type SourceProblemCode =
  | "FUSEE_GEN_INVALID_WORKFLOW"
  | "FUSEE_GEN_DUPLICATE_NAME"
  | "FUSEE_GEN_UNREACHABLE_TYPE"
  | "FUSEE_GEN_UNDECLARED_PATCH"
  | "FUSEE_GEN_UNRESOLVED_CALL"
  | "FUSEE_GEN_NONDETERMINISM";

/** One problem in workflow source, located at `file:line`. */
export interface SourceProblem {
  readonly code: SourceProblemCode;
  readonly at: SourceLocation;
  /** What is wrong and how to fix it, without the location. */
  readonly message: string;
}

/** Workflow source that cannot be turned into a client or a lock entry; lists every problem found. */
export class SourceError extends GenError {
  override readonly code: string = "FUSEE_GEN_SOURCE";
  readonly problems: readonly SourceProblem[];

  constructor(problems: readonly SourceProblem[]) {
    super(problems.map((p) => `${formatLocation(p.at)}: ${p.message}`).join("\n"));
    this.problems = problems;
  }
}

/**
 * A change that runs recorded under fusee.lock.json could not replay, without a `ctx.patched()`
 * guard: in `breaking`, whatever path they took; in `possiblyBreaking`, on the paths `condition` names.
 */
export interface BreakingChange {
  readonly workflow: string;
  /** The step (or patch marker, or workflow) the change concerns. */
  readonly step: string;
  readonly kind:
    | "inserted"
    | "removed"
    | "renamed"
    | "reordered"
    | "arguments-changed"
    | "type-changed"
    | "workflow-removed"
    | "condition-changed"
    | "patch-renamed"
    | "after-last-wait";
  readonly at: SourceLocation;
  /** The full explanation, with `file:line` and the fix. */
  readonly message: string;
  /** For a possibly breaking change: the path runs must have taken to break (`\`0 < input\` holds`). */
  readonly condition?: string;
}

/** `fusee gen` refused to record replay-breaking changes; nothing was written. */
export class BreakingChangeError extends GenError {
  override readonly code: string = "FUSEE_GEN_BREAKING_CHANGE";
  readonly changes: readonly BreakingChange[];

  constructor(changes: readonly BreakingChange[]) {
    super(changes.map((c) => c.message).join("\n"));
    this.changes = changes;
  }
}

/** Renders a location as `file:line`, the form editors and terminals turn into links. */
export function formatLocation(at: SourceLocation): string {
  return `${at.file}:${at.line}`;
}
