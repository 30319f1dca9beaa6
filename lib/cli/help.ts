/**
 * The `Examples:` block of a command's `--help`: command lines a reader can copy, each prefixed
 * with `harvester` (the bin on PATH: `bin/` of the repository, `npm link`, or an install). Every command
 * adds one with `.addHelpText('after', examples(…))`; a test walks the command tree for it.
 *
 * @example
 * program.command('runs start <sourceId>').addHelpText('after', examples('runs start acme --mode full --watch'));
 */
export function examples(...lines: readonly string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ harvester ${line}`).join('\n')}\n`;
}
