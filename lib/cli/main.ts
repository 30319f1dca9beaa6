import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { ApiProblemError, ApiUnreachableError, DEFAULT_ENDPOINT } from './client.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerDlqCommands } from './commands/dlq.js';
import { registerFakeSourceCommand } from './commands/fake-source.js';
import { registerLocalCommand } from './commands/local.js';
import { registerRunCommands } from './commands/runs.js';
import { registerSourceCommands } from './commands/sources.js';
import { CliUsageError } from './context.js';
import { type Io, PROCESS_IO, printProblem } from './output.js';

/**
 * `harvester`: the admin API from a terminal (DESIGN §9), plus `local` and `fake-source` to run
 * everything on one machine.
 *
 * @example
 * harvester sources put acme --connector rest-json --config @acme.json --schedule "rate(1 hour):incremental"
 * harvester runs start acme --mode full --watch
 */
export function buildProgram(io: Io = PROCESS_IO): Command {
  const program = new Command()
    .name('harvester')
    .description('Harvester admin CLI: sources, runs, dead letters; and a local stack')
    .option(
      '--endpoint <url>',
      `admin API URL (env HARVESTER_API_URL, default ${DEFAULT_ENDPOINT}); https is signed with SigV4`,
    )
    .option('--json', 'print machine-readable JSON')
    .showHelpAfterError()
    .configureOutput({ writeOut: (s) => io.out.write(s), writeErr: (s) => io.err.write(s) })
    .exitOverride();
  registerSourceCommands(program, io);
  registerRunCommands(program, io);
  registerDlqCommands(program, io);
  registerLocalCommand(program, io);
  registerFakeSourceCommand(program, io);
  registerDemoCommand(program, io);
  return program;
}

/** Runs the CLI; resolves the exit code (problems and unreachable APIs print `error: …` and give 1). */
export async function runCli(argv: readonly string[], io: Io = PROCESS_IO): Promise<number> {
  try {
    await buildProgram(io).parseAsync([...argv]);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof ApiProblemError) printProblem(io, error.problem);
    else if (error instanceof ApiUnreachableError || error instanceof CliUsageError)
      io.err.write(`error: ${error.message}\n`);
    else if (error instanceof Error)
      io.err.write(`error: ${process.env.HARVESTER_DEBUG ? error.stack : error.message}\n`);
    else io.err.write(`error: ${String(error)}\n`);
    return 1;
  }
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
