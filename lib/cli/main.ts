import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { API_VERSION } from '../api/version.js';
import { ApiProblemError, ApiUnreachableError, createApiClient, DEFAULT_ENDPOINT } from './client.js';
import { registerConnectorCommands } from './commands/connectors.js';
import { registerConsoleCommand } from './commands/console.js';
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
import { EXIT_CODES } from './exit-codes.js';
import { examples } from './help.js';
import { type Io, PROCESS_IO, printProblem, quietOnBrokenPipe } from './output.js';
import { MissingCredentialsError } from './sigv4.js';
import { notFoundHints } from './suggest.js';
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
    .version(
      `${CLI_VERSION} (admin API ${API_VERSION})`,
      '-V, --version',
      'print the version, and the admin API version it speaks',
    )
    .option(
      '--endpoint <url>',
      `admin API URL (env HARVESTER_API_URL, default ${DEFAULT_ENDPOINT}); https is signed with SigV4`,
    )
    .option(
      '--json',
      'print machine-readable JSON (--json=field,… selects fields of the answer, or of each item of a list)',
    )
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
  registerConsoleCommand(program, io);
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
 * Runs the CLI; resolves the exit code ({@link EXIT_CODES}). Problems and unreachable APIs print
 * `error: …` and give 1, usage mistakes 2, missing or refused credentials 4; with `--json` they
 * are problem+json on stderr instead, with the same exit code. Bare `harvester` prints the help
 * and exits 0. A reader that closes the pipe early (`| head -1`) ends the command quietly.
 */
export async function runCli(given: readonly string[], baseIo: Io = PROCESS_IO): Promise<number> {
  // `--json=a,b`: the JSON answer with only those fields (the `=` keeps it apart from an argument).
  const selection = given.find((arg) => arg.startsWith('--json='));
  const argv = given.map((arg) => (arg.startsWith('--json=') ? '--json' : arg));
  const fields = selection
    ?.slice('--json='.length)
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  const io: Io = fields && fields.length > 0 ? { ...baseIo, jsonFields: fields } : baseIo;
  const json = argv.includes('--json');
  if (baseIo === PROCESS_IO) quietOnBrokenPipe(process.stdout);
  const program = buildProgram(io, { json });
  if (isBare(argv)) {
    io.out.write(program.helpInformation());
    return EXIT_CODES.ok;
  }
  try {
    await program.parseAsync([...argv]);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT_CODES.ok;
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode === 0) return EXIT_CODES.ok; // --help, --version
    const code = exitCodeOf(error);
    if (json) {
      io.err.write(`${JSON.stringify(problemOf(error))}\n`);
      return code;
    }
    if (error instanceof CommanderError) return code;
    if (error instanceof ApiProblemError) {
      const hint = (args: string) => pasteableCommand(endpointOf(argv), args);
      printProblem(io, error.problem, hint);
      const more = await notFoundHints(error.problem, () => createApiClient(endpointOf(argv)), hint);
      if (more.length > 0) io.err.write(`${more.join('\n')}\n`);
    } else if (error instanceof ApiUnreachableError || error instanceof CliUsageError)
      io.err.write(`error: ${error.message}\n`);
    else if (error instanceof Error)
      io.err.write(`error: ${process.env.HARVESTER_DEBUG ? error.stack : error.message}\n`);
    else io.err.write(`error: ${String(error)}\n`);
    return code;
  }
}

/** The exit code an error ends the CLI with. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof CommanderError || error instanceof CliUsageError) return EXIT_CODES.usage;
  if (error instanceof MissingCredentialsError) return EXIT_CODES.auth;
  if (error instanceof ApiProblemError && (error.problem.status === 401 || error.problem.status === 403))
    return EXIT_CODES.auth;
  return EXIT_CODES.failed;
}

/** Only global options (or nothing) after the script: no command was named. */
function isBare(argv: readonly string[]): boolean {
  const rest = argv.slice(2);
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--endpoint') i++;
    else if (arg !== '--json' && !arg.startsWith('--endpoint=')) return false;
  }
  return true;
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
