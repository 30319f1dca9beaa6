import type { Command } from 'commander';
import type { z } from 'zod';
import type { DeadLetterPageSchema } from '../../api/schemas/dead-letters.js';
import type { RunView } from '../../api/schemas/runs.js';
import { ERROR_CLASSES } from '../../retry/errors.js';
import { intInRange, MAX_LIST_LIMIT, oneOf } from '../choices.js';
import { contextOf } from '../context.js';
import { examples } from '../help.js';
import { type Io, printJson, printLines, printTable } from '../output.js';
import { reportStarted } from './runs.js';

type DeadLetterPage = z.infer<typeof DeadLetterPageSchema>;

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/** `harvester dlq list|retry`. */
export function registerDlqCommands(program: Command, io: Io): void {
  const dlq = program
    .command('dlq')
    .addHelpText('after', examples('dlq list acme', 'dlq retry acme --watch'))
    .description('dead letters: failed items and pages');

  dlq
    .command('list <sourceId>')
    .addHelpText('after', examples('dlq list acme', 'dlq list acme --error-class permanent --limit 20'))
    .description("list a source's open dead letters")
    .option('--run <runId>', 'only entries whose last failure was in this run')
    .option('--error-class <class>', ERROR_CLASSES.join(' or '), oneOf('--error-class', ERROR_CLASSES))
    .option('--limit <n>', 'entries per page (1–100)', intInRange('--limit', 1, MAX_LIST_LIMIT), 50)
    .option('--cursor <cursor>', 'nextCursor of a previous page')
    .action(
      async (
        sourceId: string,
        opts: { run?: string; errorClass?: string; limit: number; cursor?: string },
        cmd: Command,
      ) => {
        const ctx = contextOf(cmd, io);
        const page = await (await ctx.client()).get<DeadLetterPage>(
          `/sources/${encodeURIComponent(sourceId)}/dead-letters`,
          {
            runId: opts.run,
            errorClass: opts.errorClass,
            limit: opts.limit,
            cursor: opts.cursor,
          },
        );
        if (ctx.json) return printJson(io, page);
        printTable(
          io,
          ['KIND', 'REF', 'CLASS', 'ATTEMPTS', 'LAST RUN', 'REASON'],
          page.items.map((e) => [
            e.kind,
            clip(e.ref || '(first page)', 40),
            e.errorClass,
            String(e.attempts),
            e.runId,
            clip(e.reason, 80),
          ]),
          page.nextCursor ? 'no matching entries on this page' : 'no open dead letters',
        );
        if (page.nextCursor) {
          const filters = `${opts.run ? ` --run ${opts.run}` : ''}${opts.errorClass ? ` --error-class ${opts.errorClass}` : ''}`;
          printLines(io, [
            `more: ${ctx.hint(`dlq list ${sourceId}${filters} --limit ${opts.limit} --cursor ${page.nextCursor}`)}`,
          ]);
        }
      },
    );

  dlq
    .command('retry <sourceId>')
    .addHelpText('after', examples('dlq retry acme', 'dlq retry acme --watch && echo all recovered'))
    .description(
      'retry failed: start a dlq_retry run over the open dead letters (with --watch: exits 0 when all recovered, 1 while any still fail)',
    )
    .option('--watch', 'follow the run until it ends')
    .action(async (sourceId: string, opts: { watch?: boolean }, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const run = await (await ctx.client()).request<RunView>(
        'POST',
        `/sources/${encodeURIComponent(sourceId)}/dead-letters/retry`,
      );
      await reportStarted(ctx, run, Boolean(opts.watch));
    });
}
