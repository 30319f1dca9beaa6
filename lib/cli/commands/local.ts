import type { Command } from 'commander';
import { CliUsageError, pasteableCommand, positiveInt } from '../context.js';
import { type Io, printLines } from '../output.js';

const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

/** Waits for SIGINT or SIGTERM, then runs `stop`; a second signal exits at once. */
export function untilSignal(io: Io, stop: () => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) process.exit(130);
      stopping = true;
      io.err.write(`\n${signal}: stopping…\n`);
      stop().then(resolve, (error: unknown) => {
        io.err.write(`error while stopping: ${String(error)}\n`);
        process.exitCode = 1;
        resolve();
      });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/** `harvester local`: the whole stack on this machine. */
export function registerLocalCommand(program: Command, io: Io): void {
  program
    .command('local')
    .description(
      'run Harvester locally: emulator (moto unless AWS_ENDPOINT_URL is set), workers, reaper, schedules and the API',
    )
    .option('--api-port <port>', 'admin API port on 127.0.0.1', positiveInt('--api-port'), 8787)
    .option('--prefix <prefix>', 'resource name prefix', 'harvester')
    .option('--workers <n>', 'in-process page workers', positiveInt('--workers'), 2)
    .option('--process-workers <n>', 'page workers as child processes', positiveInt('--process-workers'), 0)
    .option('--log-level <level>', LOG_LEVELS.join(', '), 'WARN')
    .action(
      async (opts: {
        apiPort: number;
        prefix: string;
        workers: number;
        processWorkers: number;
        logLevel: string;
      }) => {
        const logLevel = opts.logLevel.toUpperCase();
        if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
          throw new CliUsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
        const { startLocalStack } = await import('../../local/local-stack.js');
        const stack = await startLocalStack({
          apiPort: opts.apiPort,
          prefix: opts.prefix,
          workers: opts.workers,
          processWorkers: opts.processWorkers,
          logLevel: logLevel as LogLevel,
        });
        const emulator = process.env.AWS_ENDPOINT_URL
          ? 'given by AWS_ENDPOINT_URL'
          : 'moto, stops with this process';
        printLines(io, [
          `API ready at ${stack.apiUrl}`,
          `AWS endpoint ${stack.endpoint} (${emulator})`,
          `resources prefixed "${opts.prefix}"; ${opts.workers} workers; reaper every minute`,
          `try: ${pasteableCommand(stack.apiUrl, 'sources list')}`,
          'Ctrl-C stops everything started here.',
        ]);
        await untilSignal(io, () => stack.stop());
      },
    );
}
