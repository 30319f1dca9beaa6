import type { Command } from 'commander';
import type { z } from 'zod';
import { type DeadLetterPageSchema, LISTED_DEAD_LETTER_STATES } from '../../api/schemas/dead-letters.js';
import type { RunView } from '../../api/schemas/runs.js';
import { ERROR_CLASSES } from '../../retry/errors.js';
import { intInRange, MAX_LIST_LIMIT, oneOf } from '../choices.js';
import { contextOf } from '../context.js';
import { examples } from '../help.js';
import { type Io, printJson, printLines, printTable } from '../output.js';
import { filterFlags, filterOf, registerDlqDiscardCommand, shellWord } from './dlq-discard.js';
import { registerDlqEntryCommands } from './dlq-entry.js';
import { reportStarted } from './runs.js';

type DeadLetterPage = z.infer<typeof DeadLetterPageSchema>;

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/** `harvester dlq list|show|discard|retry`. */
export function registerDlqCommands(program: Command, io: Io): void {
  const dlq = program
    .command('dlq')
    .addHelpText(
      'after',
      examples(
        'dlq list acme',
        "dlq show acme 'item#e-000042'",
        'dlq retry acme --watch',
        "dlq discard acme --error-class permanent --reason 'invalid upstream, accepted'",
      ),
    )
    .description('dead letters: failed items and pages');

  dlq
    .command('list <sourceId>')
    .addHelpText(
      'after',
      examples(
        'dlq list acme',
        'dlq list acme --error-class permanent --limit 20',
        "dlq list acme --reason-match 'HTTP 404'",
        'dlq list acme --state discarded   # the audit trail: who, when, why',
      ),
    )
    .description("list a source's open dead letters (--state discarded: the ones given up on)")
    .option('--run <runId>', 'only entries whose last failure was in this run')
    .option('--error-class <class>', ERROR_CLASSES.join(' or '), oneOf('--error-class', ERROR_CLASSES))
    .option('--reason-match <text>', 'only entries whose failure reason contains this text')
    .option(
      '--state <state>',
      `${LISTED_DEAD_LETTER_STATES.join(' or ')} (default open)`,
      oneOf('--state', LISTED_DEAD_LETTER_STATES),
    )
    .option('--limit <n>', 'entries per page (1–100)', intInRange('--limit', 1, MAX_LIST_LIMIT), 50)
    .option('--cursor <cursor>', 'nextCursor of a previous page')
    .action(
      async (
        sourceId: string,
        opts: {
          run?: string;
          errorClass?: string;
          reasonMatch?: string;
          state?: string;
          limit: number;
          cursor?: string;
        },
        cmd: Command,
      ) => {
        const ctx = contextOf(cmd, io);
        const page = await (await ctx.client()).get<DeadLetterPage>(
          `/sources/${encodeURIComponent(sourceId)}/dead-letters`,
          {
            runId: opts.run,
            errorClass: opts.errorClass,
            reasonMatch: opts.reasonMatch,
            state: opts.state,
            limit: opts.limit,
            cursor: opts.cursor,
          },
        );
        if (ctx.json) return printJson(io, page);
        const discarded = opts.state === 'discarded';
        printTable(
          io,
          discarded
            ? ['ENTRY', 'CLASS', 'DISCARDED', 'BY', 'WHY']
            : ['ENTRY', 'CLASS', 'ATTEMPTS', 'LAST RUN', 'REASON'],
          // The ENTRY column whole: it is what `dlq show` and `dlq discard` take.
          page.items.map((e) =>
            discarded
              ? [
                  e.entryId,
                  e.errorClass,
                  e.discard?.at ?? '',
                  e.discard?.by ?? '(no IAM identity)',
                  clip(e.discard?.reason ?? '', 60),
                ]
              : [e.entryId, e.errorClass, String(e.attempts), e.runId, clip(e.reason, 80)],
          ),
          page.nextCursor
            ? 'no matching entries on this page'
            : `no ${discarded ? 'discarded' : 'open'} dead letters`,
        );
        const first = page.items[0];
        if (first) printLines(io, [`in full: ${ctx.hint(`dlq show ${sourceId} '${first.entryId}'`)}`]);
        if (page.nextCursor) {
          const filters = `${opts.run ? ` --run ${opts.run}` : ''}${opts.errorClass ? ` --error-class ${opts.errorClass}` : ''}${opts.reasonMatch ? ` --reason-match ${shellWord(opts.reasonMatch)}` : ''}${opts.state ? ` --state ${opts.state}` : ''}`;
          printLines(io, [
            `more: ${ctx.hint(`dlq list ${sourceId}${filters} --limit ${opts.limit} --cursor ${page.nextCursor}`)}`,
          ]);
        }
      },
    );

  registerDlqEntryCommands(dlq, io);
  registerDlqDiscardCommand(dlq, io);

  dlq
    .command('retry <sourceId>')
    .addHelpText(
      'after',
      examples(
        'dlq retry acme',
        'dlq retry acme --watch && echo all recovered',
        'dlq retry acme --error-class transient --watch   # only the transient ones',
      ),
    )
    .description(
      'retry failed: start a dlq_retry run over the open dead letters, or only those a filter matches (with --watch: exits 0 when all recovered, 1 while any still fail)',
    )
    .option('--run <runId>', 'only entries whose last failure was in this run')
    .option('--error-class <class>', ERROR_CLASSES.join(' or '), oneOf('--error-class', ERROR_CLASSES))
    .option('--reason-match <text>', 'only entries whose failure reason contains this text')
    .option('--watch', 'follow the run until it ends')
    .action(
      async (
        sourceId: string,
        opts: { run?: string; errorClass?: string; reasonMatch?: string; watch?: boolean },
        cmd: Command,
      ) => {
        const ctx = contextOf(cmd, io);
        const filter = filterOf(opts);
        const run = await (await ctx.client()).request<RunView>(
          'POST',
          `/sources/${encodeURIComponent(sourceId)}/dead-letters/retry`,
          filter ? { filter } : undefined,
        );
        if (filter && !ctx.json)
          printLines(io, [
            `retrying only the open dead letters of ${sourceId} matching ${filterFlags(filter)}`,
          ]);
        await reportStarted(ctx, run, Boolean(opts.watch));
      },
    );
}
