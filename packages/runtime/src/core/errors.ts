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
  readonly code: string = "FUSEE_ERROR";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A request was refused before anything was recorded: a failed validator, an unknown name, a bad rule. */
export class RejectedError extends FuseeError {
  override readonly code: string = "FUSEE_REJECTED";
}

/** A workflow ID is taken and the ID policy does not allow another run. */
export class AlreadyExistsError extends FuseeError {
  override readonly code: string = "FUSEE_ALREADY_EXISTS";
}

/** No workflow run, workflow type or schedule has the given name. */
export class NotFoundError extends FuseeError {
  override readonly code: string = "FUSEE_NOT_FOUND";
}

/**
 * A workflow or step failed with an error whose class is not registered, so it is rebuilt from its
 * recorded name, message and stack.
 */
export class WorkflowFailedError extends FuseeError {
  override readonly code: string = "FUSEE_WORKFLOW_FAILED";
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
  override readonly code: string = "FUSEE_TERMINATED";
}

/** The run was cancelled; delivered to workflow code at its current wait. */
export class CancelledError extends FuseeError {
  override readonly code: string = "FUSEE_CANCELLED";
}

/** A step, child or wait ran past its timeout. */
export class TimeoutError extends FuseeError {
  override readonly code: string = "FUSEE_TIMEOUT";
}

/** Workflow code asked for something other than what its journal holds at that position. */
export class NonDeterminismError extends FuseeError {
  override readonly code: string = "FUSEE_NON_DETERMINISM";
}

/** A payload could not be encoded, decoded, encrypted or decrypted. */
export class CodecError extends FuseeError {
  override readonly code: string = "FUSEE_CODEC";
}

/** The configuration is invalid or does not match what is on disk. */
export class ConfigError extends FuseeError {
  override readonly code: string = "FUSEE_CONFIG";
}

/** The storage failed: an I/O error, corruption, a lock held by another process, a fatal shard. */
export class StorageError extends FuseeError {
  override readonly code: string = "FUSEE_STORAGE";
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
  override readonly code: string = "FUSEE_SHARD_MOVED";
}

/**
 * The PostgreSQL driver (`pg`) is not installed: PostgreSQL storage loads it on demand, so an
 * application that uses `Config.postgres` installs it itself (`npm install pg`).
 */
export class DriverMissingError extends ConfigError {
  override readonly code: string = "FUSEE_DRIVER_MISSING";
}

/**
 * A call forwarded to the process holding a run's shard got no answer in time (no process held the
 * shard, or its holder could not reach the database). The request was withdrawn, though a holder
 * that had begun it may still complete it; asking again is safe for calls that carry their own ID.
 */
export class ForwardTimeoutError extends TimeoutError {
  override readonly code: string = "FUSEE_FORWARD_TIMEOUT";
}
