/**
 * The `harvester …` commands that answers and messages point to, written once so every hint is
 * a command an operator can paste as it stands: arguments quoted for a POSIX shell only when
 * they need it, nothing left for the reader to fill in.
 */

/** A word as a POSIX shell reads it back unchanged: bare when safe, else single-quoted. */
export function shellWord(word: string): string {
  if (/^[A-Za-z0-9_./:=,@%+-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The CLI commands hints name. */
export const CLI_COMMANDS = {
  /**
   * Binds a source's secrets, each to its origins. The command replaces the source's bindings as
   * a whole, so a hint passes every binding the source should keep, not only the one to add.
   *
   * @example
   * CLI_COMMANDS.secretsBind('acme', { 'ssm:/harvester/acme/token': ['https://api.github.com'] })
   * // harvester secrets bind acme --secret ssm:/harvester/acme/token=https://api.github.com
   */
  secretsBind(sourceId: string, bindings: Readonly<Record<string, readonly string[]>>): string {
    const secrets = Object.entries(bindings).map(
      ([reference, origins]) => ` --secret ${shellWord(`${reference}=${origins.join(',')}`)}`,
    );
    return `harvester secrets bind ${shellWord(sourceId)}${secrets.join('')}`;
  },
  /** Shows a source's secret bindings. */
  secretsShow: (sourceId: string): string => `harvester secrets show ${shellWord(sourceId)}`,
  /** Follows a run until it ends. */
  runsWatch: (runId: string): string => `harvester runs watch ${shellWord(runId)}`,
  /** Cancels a run. */
  runsCancel: (runId: string): string => `harvester runs cancel ${shellWord(runId)}`,
  /** Starts a run over a source's open dead letters. */
  dlqRetry: (sourceId: string): string => `harvester dlq retry ${shellWord(sourceId)}`,
} as const;
