import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { ApiProblemError, ApiUnreachableError, DEFAULT_ENDPOINT } from './client.js';
import { registerConnectorCommands } from './commands/connectors.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerDlqCommands } from './commands/dlq.js';
import { registerEventCommands } from './commands/events.js';
import { registerFakeSourceCommand } from './commands/fake-source.js';
import { registerItemCommands } from './commands/items.js';
import { registerLocalCommand } from './commands/local.js';
import { registerRunCommands } from './commands/runs.js';
import { registerSecretCommands } from './commands/secrets.js';
import { registerSourceCommands } from './commands/sources.js';
import { CliUsageError, pasteableCommand } from './context.js';
import { examples } from './help.js';
import { type Io, PROCESS_IO, printProblem } from './output.js';
import { CLI_VERSION } from './version.js';

/**
 * `harvester`: the admin API from a terminal, plus `local` and `fake-source` to run
 * everything on one machine.
 *
 * @example
 * harvester sources put acme --connector rest-json --config @acme.json --schedule "rate(1 hour):incremental"
 * harvester runs start acme --mode full --watch
 */
export function buildProgram(io: Io = PROCESS_IO, options: { json?: boolean } = {}): Command {
  const program = new Command()
    .name('harvester')
    .description('Harvester admin CLI: sources, runs, dead letters, items; and a local stack')
    .version(CLI_VERSION, '-V, --version', 'print the version')
    .option(
      '--endpoint <url>',
      `admin API URL (env HARVESTER_API_URL, default ${DEFAULT_ENDPOINT}); https is signed with SigV4`,
    )
    .option('--json', 'print machine-readable JSON')
    .showHelpAfterError(!options.json)
    .configureOutput({
      writeOut: (s) => io.out.write(s),
      writeErr: (s) => io.err.write(s),
      // With --json, usage errors are reported once, as problem+json, by runCli.
      outputError: (s, write) => {
        if (!options.json) write(s);
      },
    })
    .exitOverride()
    .addHelpText(
      'after',
      examples(
        'local   # in another terminal: the whole stack on this machine',
        'sources put acme --connector rest-json --config @acme.json --schedule "rate(1 hour):incremental"',
        'runs start acme --mode full --watch',
        '--endpoint https://abc123.execute-api.eu-west-1.amazonaws.com sources list',
      ),
    );
  registerSourceCommands(program, io);
  registerConnectorCommands(program, io);
  registerSecretCommands(program, io);
  registerRunCommands(program, io);
  registerDlqCommands(program, io);
  registerItemCommands(program, io);
  registerEventCommands(program, io);
  registerLocalCommand(program, io);
  registerFakeSourceCommand(program, io);
  registerDemoCommand(program, io);
  return program;
}

/** Problem `type` of errors the CLI finds itself (the API's problems keep their own). */
const CLI_PROBLEM_TYPES = {
  usage: 'tag:harvester,2025:problems/cli-usage',
  unreachable: 'tag:harvester,2025:problems/api-unreachable',
  failed: 'tag:harvester,2025:problems/cli-failed',
} as const;

/** Any error as problem details, for `--json` (written to stderr; stdout stays the result's). */
export function problemOf(error: unknown): Record<string, unknown> {
  if (error instanceof ApiProblemError) return { ...error.problem };
  if (error instanceof CommanderError)
    return {
      type: CLI_PROBLEM_TYPES.usage,
      title: 'Invalid command line',
      detail: error.message.replace(/^error: /, ''),
    };
  if (error instanceof CliUsageError)
    return { type: CLI_PROBLEM_TYPES.usage, title: 'Invalid command line', detail: error.message };
  if (error instanceof ApiUnreachableError)
    return { type: CLI_PROBLEM_TYPES.unreachable, title: 'API unreachable', detail: error.message };
  return {
    type: CLI_PROBLEM_TYPES.failed,
    title: 'Command failed',
    detail: error instanceof Error ? error.message : String(error),
  };
}

/**
 * Runs the CLI; resolves the exit code. Problems and unreachable APIs print `error: …` and give
 * 1; with `--json` they are problem+json on stderr instead, with the same exit code.
 */
export async function runCli(argv: readonly string[], io: Io = PROCESS_IO): Promise<number> {
  const json = argv.includes('--json');
  try {
    await buildProgram(io, { json }).parseAsync([...argv]);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode === 0) return 0; // --help, --version
    if (json) {
      io.err.write(`${JSON.stringify(problemOf(error))}\n`);
      return error instanceof CommanderError ? error.exitCode || 1 : 1;
    }
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof ApiProblemError)
      printProblem(io, error.problem, (args) => pasteableCommand(endpointOf(argv), args));
    else if (error instanceof ApiUnreachableError || error instanceof CliUsageError)
      io.err.write(`error: ${error.message}\n`);
    else if (error instanceof Error)
      io.err.write(`error: ${process.env.HARVESTER_DEBUG ? error.stack : error.message}\n`);
    else io.err.write(`error: ${String(error)}\n`);
    return 1;
  }
}

/** The `--endpoint` given on the command line, if any. */
function endpointOf(argv: readonly string[]): string | undefined {
  const at = argv.indexOf('--endpoint');
  if (at >= 0) return argv[at + 1];
  return argv.find((a) => a.startsWith('--endpoint='))?.slice('--endpoint='.length);
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) process.exitCode = await runCli(process.argv);
