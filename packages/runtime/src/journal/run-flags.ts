/**
 * Engine behaviours a run's start record names by number, so a run keeps the behaviour it started
 * with when a newer engine replays or resumes it; a run started before a flag existed goes on
 * without it. A number, once written, means its behaviour for ever.
 */
export const RUN_FLAGS = {
  /**
   * A step's idempotency key (`ctx.key()`) names the run's start time besides its number: after
   * retention forgot an ID, its next run is run 1 again, and must not be handed the keys of the
   * forgotten run 1's steps.
   */
  keysWithStartTime: 1,
} as const;

/** The flags of runs started now. */
export const CURRENT_FLAGS: readonly number[] = [RUN_FLAGS.keysWithStartTime];

/** Whether a run started with `flags` has behaviour `flag`. */
export function hasFlag(flags: readonly number[] | undefined, flag: number): boolean {
  return flags !== undefined && flags.includes(flag);
}
