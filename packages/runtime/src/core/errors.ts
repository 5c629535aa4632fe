/**
 * Every error fusee throws derives from {@link FuseeError} and carries a stable `code`, so callers
 * can branch on `err.code` (or `instanceof`) instead of parsing messages.
 *
 * @example
 * try { await engine.start(Pay, "pay-1", 700); }
 * catch (e) { if (e instanceof AlreadyExistsError) console.log(e.code); } // "FUSEE_ALREADY_EXISTS"
 */
export class FuseeError extends Error {
  /** A stable identifier of the error kind, for example `"FUSEE_NOT_FOUND"`. */
  readonly code: FuseeErrorCode = "FUSEE_ERROR";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * The stable codes of fusee's errors, one per error class (a {@link ShardMovedError} is also a
 * {@link StorageError}, a {@link ShutDownError} a {@link RejectedError}, a `DurationError` a {@link ConfigError}). `FUSEE_BAD_REQUEST` is the code of the CLI's web UI refusing a request.
 */
export type FuseeErrorCode =
  | "FUSEE_ERROR"
  | "FUSEE_REJECTED"
  | "FUSEE_SHUT_DOWN"
  | "FUSEE_ALREADY_EXISTS"
  | "FUSEE_NOT_FOUND"
  | "FUSEE_WORKFLOW_FAILED"
  | "FUSEE_TERMINATED"
  | "FUSEE_CANCELLED"
  | "FUSEE_TIMEOUT"
  | "FUSEE_NON_DETERMINISM"
  | "FUSEE_CODEC"
  | "FUSEE_CONFIG"
  | "FUSEE_DURATION"
  | "FUSEE_STORAGE"
  | "FUSEE_SHARD_MOVED"
  | "FUSEE_DRIVER_MISSING"
  | "FUSEE_FORWARD_TIMEOUT"
  | "FUSEE_BAD_REQUEST";

/**
 * Why a {@link RejectedError} refused a request, so callers can tell the cases apart without
 * parsing messages:
 *
 * - `invalid-argument`: an argument is malformed or out of range (an ID, a name, a spec, a filter,
 *   an option); also the reason of a `RejectedError` that application code throws without one.
 * - `too-large`: a record would be larger than `Config.maxPayloadBytes`.
 * - `already-finished`: the run has finished, so it takes no more signals, updates, completions or records.
 * - `unknown-signal`, `unknown-query`, `unknown-update`: the workflow declares no handler of that name.
 * - `update-rejected`: the update's validator refused its argument.
 * - `undeclared-patch`: `ctx.patched` named a patch the workflow does not declare.
 * - `unknown-step`: a reset named a step the run never reached.
 * - `unknown-limit`: a step named a limit that was never declared.
 * - `invalid-token`: a completion token is not one fusee issued, or names a workflow without a run.
 * - `stale-token`: a completion token belongs to a replaced run or an earlier attempt.
 * - `token-used`: a completion token was already answered.
 * - `window-conflict`: a debounce or batch key has an open window of another workflow type.
 * - `outside-step`: a step-only `ctx` call was made outside a running step.
 * - `shut-down`: the engine is shut down (always a {@link ShutDownError}).
 * - `unknown-request`: a cluster peer forwarded a call this version does not know.
 * - `lease-lost`: a call a cluster process made on behalf of a shard it held (a schedule's start, a
 *   debounce window's or batch's) was not performed: that process no longer held the shard's lease
 *   when the call was to be sent, or when the run's owner took it up. The shard's holder deals with it.
 */
export type RejectionReason =
  | "invalid-argument"
  | "too-large"
  | "already-finished"
  | "unknown-signal"
  | "unknown-query"
  | "unknown-update"
  | "update-rejected"
  | "undeclared-patch"
  | "unknown-step"
  | "unknown-limit"
  | "invalid-token"
  | "stale-token"
  | "token-used"
  | "window-conflict"
  | "outside-step"
  | "shut-down"
  | "unknown-request"
  | "lease-lost";

/**
 * A request was refused before anything was recorded: a failed validator, an unknown name, a bad rule.
 * `code` is `FUSEE_REJECTED` (`FUSEE_SHUT_DOWN` for its subclass {@link ShutDownError}); `reason` says which refusal it is.
 *
 * @example
 * try { await handle.signal("approve", true); }
 * catch (e) { if (e instanceof RejectedError && e.reason === "already-finished") return; throw e; }
 */
export class RejectedError extends FuseeError {
  override readonly code: "FUSEE_REJECTED" | "FUSEE_SHUT_DOWN" = "FUSEE_REJECTED";
  /** Which refusal this is (see {@link RejectionReason}); `invalid-argument` unless the thrower says otherwise. */
  readonly reason: RejectionReason;

  constructor(message: string, options?: { reason?: RejectionReason; cause?: unknown }) {
    super(message, options);
    this.reason = options?.reason ?? "invalid-argument";
  }
}

/**
 * The engine is shut down, or shutting down: whatever asked it for something (a call, a wait for a
 * result, a forwarded request) hears this, with reason `shut-down`. A step it was running hears a
 * {@link CancelledError} on its abort signal, as for any abort, and runs again when the engine reopens.
 */
export class ShutDownError extends RejectedError {
  override readonly code = "FUSEE_SHUT_DOWN";

  constructor(message = "the engine is shut down", options?: { cause?: unknown }) {
    super(message, { ...options, reason: "shut-down" });
  }
}

/** A workflow ID is taken and the ID policy does not allow another run. */
export class AlreadyExistsError extends FuseeError {
  override readonly code = "FUSEE_ALREADY_EXISTS";
}

/** No workflow run, workflow type or schedule has the given name. */
export class NotFoundError extends FuseeError {
  override readonly code = "FUSEE_NOT_FOUND";
}

/**
 * A workflow or step failed with an error whose class is not registered, so it is rebuilt from its
 * recorded name, message and stack.
 */
export class WorkflowFailedError extends FuseeError {
  override readonly code = "FUSEE_WORKFLOW_FAILED";
  /** The `name` of the original error (for example `"TypeError"`). */
  readonly originalName: string;

  constructor(message: string, originalName = "Error", stack?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.originalName = originalName;
    if (stack !== undefined) this.stack = stack;
  }
}

/** The run was terminated; waiters on its result get this error. */
export class TerminatedError extends FuseeError {
  override readonly code = "FUSEE_TERMINATED";
}

/** The run was cancelled; delivered to workflow code at its current wait. */
export class CancelledError extends FuseeError {
  override readonly code = "FUSEE_CANCELLED";
}

/** A step, child or wait ran past its timeout. */
export class TimeoutError extends FuseeError {
  override readonly code: "FUSEE_TIMEOUT" | "FUSEE_FORWARD_TIMEOUT" = "FUSEE_TIMEOUT";
}

/** Workflow code asked for something other than what its journal holds at that position. */
export class NonDeterminismError extends FuseeError {
  override readonly code = "FUSEE_NON_DETERMINISM";
}

/** A payload could not be encoded, decoded, encrypted or decrypted. */
export class CodecError extends FuseeError {
  override readonly code = "FUSEE_CODEC";
}

/** The configuration is invalid or does not match what is on disk. */
export class ConfigError extends FuseeError {
  override readonly code: "FUSEE_CONFIG" | "FUSEE_DRIVER_MISSING" | "FUSEE_DURATION" = "FUSEE_CONFIG";
}

/** The storage failed: an I/O error, corruption, a lock held by another process, a fatal shard. */
export class StorageError extends FuseeError {
  override readonly code: "FUSEE_STORAGE" | "FUSEE_SHARD_MOVED" = "FUSEE_STORAGE";
  /** The shard the failure stopped, when it stopped one (its other shards go on). */
  readonly shard: number | undefined;

  constructor(message: string, options?: { cause?: unknown; shard?: number }) {
    super(message, options);
    this.shard = options?.shard;
  }
}

/**
 * The shard of a run moved to another process of a cluster while an operation waited on it; asking
 * again reaches the new owner.
 */
export class ShardMovedError extends StorageError {
  override readonly code = "FUSEE_SHARD_MOVED";
}

/**
 * The PostgreSQL driver (`pg`) is not installed: PostgreSQL storage loads it on demand, so an
 * application that uses `Config.postgres` installs it itself (`npm install pg`).
 */
export class DriverMissingError extends ConfigError {
  override readonly code = "FUSEE_DRIVER_MISSING";
}

/**
 * A call forwarded to the process holding a run's shard got no answer in time (no process held the
 * shard, or its holder could not reach the database). The request was withdrawn, though a holder
 * that had begun it may still complete it; asking again is safe for calls that carry their own ID.
 */
export class ForwardTimeoutError extends TimeoutError {
  override readonly code = "FUSEE_FORWARD_TIMEOUT";
}

/**
 * An error of the class whose `code` is given, with `message`: how a reason recorded by its code
 * (a run found stopped) is told again. A code of no known class gives a plain {@link FuseeError}.
 */
export function errorOfCode(code: string, message: string): FuseeError {
  switch (code) {
    case "FUSEE_NON_DETERMINISM":
      return new NonDeterminismError(message);
    case "FUSEE_CODEC":
      return new CodecError(message);
    case "FUSEE_CONFIG":
      return new ConfigError(message);
    case "FUSEE_NOT_FOUND":
      return new NotFoundError(message);
    default:
      return new FuseeError(message);
  }
}
