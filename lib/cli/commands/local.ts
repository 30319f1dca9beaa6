import type { Command } from 'commander';
import { LOG_FORMAT_ENV, LOG_FORMATS, type LogFormat } from '../../observability/log-format.js';
import { oneOf } from '../choices.js';
import { CliUsageError, pasteableCommand, positiveInt } from '../context.js';
import { examples } from '../help.js';
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

/**
 * What `local` prints once it listens: where the API is, an `export` line that points every
 * later command (and `fake-source`'s paste lines) at it, and a first command to try.
 */
export function readyLines(ready: {
  apiUrl: string;
  endpoint: string;
  emulator: string;
  /** The emulator was started here (moto): its state is in its memory and goes when it stops. */
  ownEmulator: boolean;
  prefix: string;
  workers: number;
}): string[] {
  return [
    `API ready at ${ready.apiUrl}`,
    `console at ${ready.apiUrl}/ (open it in a browser)`,
    `AWS endpoint ${ready.endpoint} (${ready.emulator})`,
    ready.ownEmulator
      ? 'state is in memory: Ctrl-C forgets every source, run and item (keep them across restarts: run an emulator yourself and set AWS_ENDPOINT_URL)'
      : 'state lives in that emulator: a restart of harvester local finds it again',
    `resources prefixed "${ready.prefix}"; ${ready.workers} workers; reaper every minute`,
    'point other terminals at it (fake-source prints paste lines for it too):',
    `  export HARVESTER_API_URL=${ready.apiUrl}`,
    `try: ${pasteableCommand(ready.apiUrl, 'sources list')}`,
    'Ctrl-C stops everything started here.',
  ];
}

function portInUse(port: number): CliUsageError {
  return new CliUsageError(
    [
      `--api-port ${port}: 127.0.0.1:${port} is already in use (EADDRINUSE); another harvester local?`,
      `  use another port: harvester local --api-port ${port + 1}`,
      '  or any free one (printed when ready): harvester local --api-port 0',
    ].join('\n'),
  );
}

/**
 * Fails fast, before the emulator and workers start, when the API port is taken: a bind error
 * after a minute of start-up, without the port's name, is what the user would see otherwise.
 */
async function ensurePortFree(port: number): Promise<void> {
  if (port === 0) return;
  const { createServer } = await import('node:net');
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? portInUse(port) : error),
    );
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

/** `harvester local`: the whole stack on this machine. */
export function registerLocalCommand(program: Command, io: Io): void {
  program
    .command('local')
    .addHelpText(
      'after',
      examples(
        'local',
        'local --api-port 0   # any free port, printed',
        'local --log-level INFO   # with AWS_ENDPOINT_URL set: that emulator instead of moto',
        'local   # with AWS_ENDPOINT_URL_DYNAMODB set: DynamoDB there (DynamoDB Local), the rest on moto',
        'local --log-level INFO --log-format json | tee harvester.log   # JSON lines, as on Lambda',
      ),
    )
    .description(
      'run Harvester locally: emulator (moto unless AWS_ENDPOINT_URL is set), workers, reaper, schedules and the API',
    )
    .option(
      '--api-port <port>',
      'admin API port on 127.0.0.1 (0: any free port, printed when ready)',
      positiveInt('--api-port'),
      8787,
    )
    .option('--prefix <prefix>', 'resource name prefix', 'harvester')
    .option('--workers <n>', 'in-process page workers', positiveInt('--workers'), 2)
    .option('--process-workers <n>', 'page workers as child processes', positiveInt('--process-workers'), 0)
    .option('--log-level <level>', LOG_LEVELS.join(', '), 'WARN')
    .option(
      '--log-format <format>',
      `${LOG_FORMATS.join(', ')} (default: pretty on a terminal, json when piped or with ${LOG_FORMAT_ENV}=json)`,
      oneOf('--log-format', LOG_FORMATS),
    )
    .action(
      async (opts: {
        apiPort: number;
        prefix: string;
        workers: number;
        processWorkers: number;
        logLevel: string;
        logFormat?: LogFormat;
      }) => {
        const logLevel = opts.logLevel.toUpperCase();
        if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
          throw new CliUsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
        await ensurePortFree(opts.apiPort);
        const { applyLogFormat, chooseLogFormat } = await import('../../observability/pretty-log.js');
        const format = chooseLogFormat(opts.logFormat, process.env, Boolean(process.stdout.isTTY));
        // Worker processes inherit the environment, so their lines print in the same format.
        process.env[LOG_FORMAT_ENV] = format;
        applyLogFormat(format);
        const { startLocalStack } = await import('../../local/local-stack.js');
        const stack = await startLocalStack({
          apiPort: opts.apiPort,
          prefix: opts.prefix,
          workers: opts.workers,
          processWorkers: opts.processWorkers,
          logLevel: logLevel as LogLevel,
        }).catch((error: unknown) => {
          // Taken between the check above and the listen: the same hint.
          if ((error as { code?: string }).code === 'EADDRINUSE') throw portInUse(opts.apiPort);
          throw error;
        });
        const ownEmulator = !process.env.AWS_ENDPOINT_URL;
        const emulator = ownEmulator ? 'moto, stops with this process' : 'given by AWS_ENDPOINT_URL';
        printLines(
          io,
          readyLines({ apiUrl: stack.apiUrl, endpoint: stack.endpoint, emulator, ownEmulator, ...opts }),
        );
        await untilSignal(io, () => stack.stop());
      },
    );
}
