import type { Command } from 'commander';
import { examples } from '../help.js';
import type { Io } from '../output.js';

/** `harvester events tail`. */
export function registerEventCommands(program: Command, io: Io): void {
  const events = program
    .command('events')
    .addHelpText('after', examples('events tail'))
    .description('events on the Harvester bus');

  events
    .command('tail')
    .addHelpText('after', examples('events tail', 'events tail --type "Entity Changed" --for 60 --json'))
    .description(
      'print Harvester events as they arrive (run outcomes; entity changes with the change feed on) until Ctrl-C; talks to AWS or the emulator (AWS_ENDPOINT_URL) directly, not to the API',
    )
    .option('--type <detailType>', 'only this detail type (e.g. "Entity Changed")')
    .option('--for <seconds>', 'stop after this many seconds', (v) => Number(v))
    .action(async (opts: { type?: string; for?: number }, cmd: Command) => {
      const json = Boolean(cmd.optsWithGlobals<{ json?: boolean }>().json);
      const { tailEvents } = await import('./events-tail.js');
      await tailEvents(io, opts, json);
    });
}
