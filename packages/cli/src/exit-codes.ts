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
  /** `fusee gen --check`: a generated file or the lock is stale, and nothing worse is wrong (run `fusee gen`). */
  Stale: 4,
  /** `fusee gen`: a change that runs in flight could not replay, unguarded by `ctx.patched()`; with `--against`, a run in flight that would fail. */
  Breaking: 5,
  /** `fusee gen`: workflow source gen cannot read or that would not replay deterministically. */
  Source: 6,
  /** `fusee gen --check`: only changes that break runs in flight on some paths (named with each), and nothing worse. */
  PossiblyBreaking: 7,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * Each exit code and what it means, as `fusee --help` lists them; the README's table and
 * docs/versioning.md say the same, which a test checks.
 */
export const EXIT_CODES: readonly { readonly code: ExitCode; readonly meaning: string }[] = [
  { code: ExitCode.Ok, meaning: "ok" },
  { code: ExitCode.Failed, meaning: "a failed check: a replay that does not match, or a damaged data directory" },
  { code: ExitCode.Usage, meaning: "usage or configuration error" },
  { code: ExitCode.Internal, meaning: "internal error" },
  { code: ExitCode.Stale, meaning: "gen --check: generated files are stale (run fusee gen)" },
  {
    code: ExitCode.Breaking,
    meaning:
      "gen: a replay-breaking change (guard it with ctx.patched(), or --accept-breaking); with --against, a run in flight that would fail",
  },
  { code: ExitCode.Source, meaning: "gen: a problem in workflow source" },
  {
    code: ExitCode.PossiblyBreaking,
    meaning: "gen --check: only possibly breaking changes, which break runs in flight on the paths they name",
  },
];

/** The exit codes as `--help` shows them. */
export const EXIT_CODES_HELP = `Exit codes:\n${EXIT_CODES.map((e) => `  ${e.code}  ${e.meaning}`).join("\n")}`;
