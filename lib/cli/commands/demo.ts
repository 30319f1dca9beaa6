import type { Command } from 'commander';
import { positiveInt } from '../context.js';
import { examples } from '../help.js';
import type { Io } from '../output.js';

/** `harvester demo`: the same job as `npm run demo`; exits 1 if any check fails. */
export function registerDemoCommand(program: Command, io: Io): void {
  program
    .command('demo')
    .addHelpText('after', examples('demo', 'demo --entities 1000'))
    .description('run the demo: a faulty source, a killed worker, the reaper, retry-failed, verified counts')
    .option('--entities <n>', 'entities at the fake source (default 6000)', positiveInt('--entities'))
    .action(async (opts: { entities?: number }) => {
      const { runDemo } = await import('../../../tools/demo/demo.js');
      const checks = await runDemo({ out: io.out, ...(opts.entities ? { entities: opts.entities } : {}) });
      const failed = checks.filter((c) => !c.ok);
      if (failed.length > 0) {
        io.err.write(`demo: ${failed.length} check(s) failed: ${failed.map((c) => c.name).join(', ')}\n`);
        process.exitCode = 1;
      }
    });
}
