/**
 * Exit codes of every `fusee` command. Scripts and CI rely on them, so they only ever gain members.
 */
export const ExitCode = {
  /** Done; nothing to report. */
  Ok: 0,
  /** The command ran and found a problem: a failed replay, damaged data (gen has codes of its own below). */
  Failed: 1,
  /** The command line or the configuration is wrong (unknown option, missing tsconfig.json, bad config file). */
  Usage: 2,
  /** An unexpected internal error. */
  Internal: 3,
  /** `fusee gen --check`: a generated file or the lock is stale, and nothing else is wrong (run `fusee gen`). */
  Stale: 4,
  /** `fusee gen`: a change that runs in flight could not replay, unguarded by `ctx.patched()`. */
  Breaking: 5,
  /** `fusee gen`: workflow source gen cannot read or that would not replay deterministically. */
  Source: 6,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit codes as `--help` shows them. */
export const EXIT_CODES_HELP = `Exit codes:
  0  ok
  1  a failed check: a replay that does not match, or a damaged data directory
  2  usage or configuration error
  3  internal error
  4  gen --check: generated files are stale (run fusee gen)
  5  gen: a replay-breaking change (guard it with ctx.patched(), or --accept-breaking)
  6  gen: a problem in workflow source`;
