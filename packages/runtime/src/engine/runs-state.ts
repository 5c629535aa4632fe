import { ShardMovedError, ShutDownError, StorageError } from "../core/errors.js";
import type { EngineEvent } from "./engine-events.js";

/**
 * Whether the runs of a process may still work: open, shut down, or stopped by a storage failure
 * (the first one is kept and told once). Every part of the runs asks here.
 */
export class RunsState {
  private shut = false;
  private fatal: Error | undefined;

  constructor(
    /** Whether this process holds the shard: a failure of a shard it no longer holds is its next owner's. */
    private readonly owns: (shard: number) => boolean,
    private readonly emit: (event: EngineEvent) => void,
  ) {}

  /** True once the runs shut down. */
  get closed(): boolean {
    return this.shut;
  }

  /** The error that stopped the runs (a failed storage), if any. */
  get failure(): Error | undefined {
    return this.fatal;
  }

  /** True once nothing more is journaled: the runs shut down or failed (and said so). */
  get stopped(): boolean {
    return this.shut || this.fatal !== undefined;
  }

  close(): void {
    this.shut = true;
  }

  assertOpen(): void {
    if (this.fatal) throw this.fatal;
    if (this.shut) throw new ShutDownError();
  }

  /**
   * The storage failed: the runs stop with a `StorageError` (returned, to tell waiters), except for
   * a failure of a shard this process of a cluster no longer holds, whose next owner resumes its
   * runs from what is durable (`undefined`).
   */
  storageFailed(e: unknown, shard?: number): StorageError | undefined {
    if (this.shut) return undefined;
    const of = shard ?? (e instanceof StorageError ? e.shard : undefined);
    if ((of !== undefined && !this.owns(of)) || e instanceof ShardMovedError) return undefined;
    const error = e instanceof StorageError ? e : new StorageError(`storage failed: ${(e as Error)?.message ?? String(e)}`, { cause: e });
    if (this.fatal === undefined) {
      this.fatal = error;
      this.emit({ kind: "shard-fatal", shard, error });
    }
    return error;
  }
}
