/**
 * Exit codes of every `fusee` command. Scripts and CI rely on them, so they only ever gain members.
 */
export const ExitCode = {
  /** Done; nothing to report. */
  Ok: 0,
  /** The command ran and found a problem: a check failed, a breaking change, a problem in workflow source, damaged data. */
  Failed: 1,
  /** The command line or the configuration is wrong (unknown option, missing tsconfig.json, bad config file). */
  Usage: 2,
  /** An unexpected internal error. */
  Internal: 3,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit codes as `--help` shows them. */
export const EXIT_CODES_HELP = `Exit codes:
  0  ok
  1  check failed, breaking change, a problem in workflow source, or a damaged data directory
  2  usage or configuration error
  3  internal error`;
