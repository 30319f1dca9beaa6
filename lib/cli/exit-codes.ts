/**
 * The CLI's exit codes, in the manner of `gh`: a script can tell a failure from a usage mistake,
 * a cancelled watch and missing permissions without reading the words. docs/cli.md lists them.
 */
export const EXIT_CODES = {
  /** The command did what it was asked. */
  ok: 0,
  /** It failed: the API refused, the run did not succeed, the API was unreachable. */
  failed: 1,
  /** The command line was wrong (unknown command, option or value); nothing was sent. */
  usage: 2,
  /** Ctrl-C ended a watch; the run itself goes on. */
  cancelled: 2,
  /** `--fail-on-dead-letters`: the run ended well but left dead letters. */
  deadLetters: 3,
  /** No usable credentials, or the credentials may not call this route (401/403). */
  auth: 4,
} as const;

/** One of {@link EXIT_CODES}. */
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];
