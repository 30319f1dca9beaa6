import type { Command } from 'commander';
import type { z } from 'zod';
import type {
  BulkDiscardResultSchema,
  DeadLetterDetailSchema,
  DeadLetterFilterSchema,
} from '../../api/schemas/dead-letters.js';
import { ERROR_CLASSES } from '../../retry/errors.js';
import { oneOf } from '../choices.js';
import { confirm } from '../confirm.js';
import { CliUsageError, type CommandContext, contextOf } from '../context.js';
import { examples } from '../help.js';
import { type Io, printJson, printLines } from '../output.js';
import { entryPath } from './dlq-entry.js';

type DeadLetterDetail = z.infer<typeof DeadLetterDetailSchema>;
type BulkDiscardResult = z.infer<typeof BulkDiscardResultSchema>;
/** A filter as the API takes it. */
export type DeadLetterFilter = z.input<typeof DeadLetterFilterSchema>;

interface DiscardOptions {
  readonly reason: string;
  readonly run?: string;
  readonly errorClass?: string;
  readonly reasonMatch?: string;
  readonly all?: boolean;
  readonly yes?: boolean;
}

/** A word of the shell that pastes back as the same argument. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./#-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The filter the flags name, or undefined when they name none (the single-entry form; retry: all). */
export function filterOf(
  opts: Pick<DiscardOptions, 'run' | 'errorClass' | 'reasonMatch' | 'all'>,
): DeadLetterFilter | undefined {
  const narrowed = opts.run !== undefined || opts.errorClass !== undefined || opts.reasonMatch !== undefined;
  if (opts.all && narrowed)
    throw new CliUsageError(
      '--all means every open dead letter: give it alone, or drop it and keep --run, --error-class or --reason-match',
    );
  if (opts.all) return { all: true };
  if (!narrowed) return undefined;
  return {
    ...(opts.run !== undefined ? { runId: opts.run } : {}),
    ...(opts.errorClass !== undefined
      ? { errorClass: opts.errorClass as (typeof ERROR_CLASSES)[number] }
      : {}),
    ...(opts.reasonMatch !== undefined ? { reasonMatch: opts.reasonMatch } : {}),
  };
}

/** The flags of a filter, as the user would type them again. */
export function filterFlags(filter: DeadLetterFilter): string {
  if (filter.all) return '--all';
  return [
    filter.runId !== undefined ? `--run ${filter.runId}` : '',
    filter.errorClass !== undefined ? `--error-class ${filter.errorClass}` : '',
    filter.reasonMatch !== undefined ? `--reason-match ${shellWord(filter.reasonMatch)}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** Calls the bulk-discard route until its cursor runs out, adding up what the calls did. */
async function followAll(
  ctx: CommandContext,
  sourceId: string,
  body: { filter: DeadLetterFilter; reason: string; dryRun: boolean },
): Promise<Omit<BulkDiscardResult, 'nextCursor'>> {
  const client = await ctx.client();
  const path = `/sources/${encodeURIComponent(sourceId)}/dead-letters/discard`;
  const total = { dryRun: body.dryRun, matched: 0, discarded: 0, skipped: 0 };
  let cursor: string | null = null;
  do {
    const answer: BulkDiscardResult = await client.request<BulkDiscardResult>('POST', path, {
      ...body,
      ...(cursor !== null ? { cursor } : {}),
    });
    total.matched += answer.matched;
    total.discarded += answer.discarded;
    total.skipped += answer.skipped;
    cursor = answer.nextCursor;
  } while (cursor !== null);
  return total;
}

/**
 * `dlq discard <source> --run R | --error-class C | --reason-match S | --all`: counts the open
 * entries the filter matches, says how many and asks (`--yes` answers), then discards them call
 * by call, and says how many were discarded and how many skipped (discarded, resolved or failed
 * again differently since the count).
 */
async function discardByFilter(
  ctx: CommandContext,
  sourceId: string,
  filter: DeadLetterFilter,
  opts: DiscardOptions,
): Promise<void> {
  const flags = filterFlags(filter);
  const counted = await followAll(ctx, sourceId, { filter, reason: opts.reason, dryRun: true });
  if (counted.matched === 0) {
    if (ctx.json) return printJson(ctx.io, { sourceId, filter, counted: 0, discarded: 0, skipped: 0 });
    return printLines(ctx.io, [`no open dead letters of ${sourceId} match ${flags}: nothing to discard`]);
  }
  if (!ctx.json) printLines(ctx.io, [`${counted.matched} open dead letters of ${sourceId} match ${flags}`]);
  const question = `discard ${counted.matched} dead letters of ${sourceId} (${flags}) as "${opts.reason}"?`;
  if (!(await confirm(ctx.io, question, { yes: opts.yes, flag: '--yes' })))
    return printLines(ctx.io, [`kept the dead letters of ${sourceId}: nothing discarded`]);
  const done = await followAll(ctx, sourceId, { filter, reason: opts.reason, dryRun: false });
  // Counted but not discarded: skipped at the write (discarded, resolved or failed again in
  // between), or gone from the listing before the discard read it (resolved since the count).
  const skipped = Math.max(done.skipped, counted.matched - done.discarded);
  if (ctx.json)
    return printJson(ctx.io, {
      sourceId,
      filter,
      counted: counted.matched,
      discarded: done.discarded,
      skipped,
    });
  printLines(ctx.io, [
    `discarded ${done.discarded} dead letters of ${sourceId}: ${opts.reason}`,
    ...(skipped > 0
      ? [`skipped ${skipped}: discarded, resolved or failed again differently since they were counted`]
      : []),
    `kept as audit records: ${ctx.hint(`dlq list ${sourceId} --state discarded`)}`,
  ]);
}

async function discardOne(
  ctx: CommandContext,
  sourceId: string,
  entry: string,
  reason: string,
): Promise<void> {
  const detail = await (await ctx.client()).request<DeadLetterDetail>(
    'POST',
    `${entryPath(sourceId, entry)}/discard`,
    { reason },
  );
  if (ctx.json) return printJson(ctx.io, detail);
  printLines(ctx.io, [
    `discarded ${detail.entryId} of ${sourceId}: ${reason}`,
    `kept as an audit record: ${ctx.hint(`dlq list ${sourceId} --state discarded`)}`,
  ]);
}

/** `harvester dlq discard`: one entry, or every open entry a filter matches. */
export function registerDlqDiscardCommand(dlq: Command, io: Io): void {
  dlq
    .command('discard <sourceId> [entry]')
    .addHelpText(
      'after',
      examples(
        "dlq discard acme 'item#e-000042' --reason 'deleted upstream, nothing to fetch'",
        "dlq discard acme --error-class permanent --reason 'invalid upstream, accepted'",
        "dlq discard acme --run 01J9ZQ4T7J8Y2K3M4N5P6Q7R8S --reason-match 'HTTP 404' --reason gone --yes",
        "dlq discard acme --all --reason 'source retired'",
      ),
    )
    .description(
      'give up on a dead letter, or on every open one a filter matches (counted and confirmed first): each stays as an audit record (who, when, why) and no longer counts as open or is retried',
    )
    .requiredOption('--reason <text>', 'why they are given up on (kept with each entry)')
    .option('--run <runId>', 'every open entry whose last failure was in this run')
    .option('--error-class <class>', ERROR_CLASSES.join(' or '), oneOf('--error-class', ERROR_CLASSES))
    .option('--reason-match <text>', 'every open entry whose failure reason contains this text')
    .option('--all', 'every open entry of the source')
    .option('-y, --yes', 'do not ask (needed when no terminal can answer, e.g. in scripts)')
    .action(async (sourceId: string, entry: string | undefined, opts: DiscardOptions, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const filter = filterOf(opts);
      if (filter && entry !== undefined)
        throw new CliUsageError(`give one entry (${entry}) or a filter (${filterFlags(filter)}), not both`);
      if (filter) return discardByFilter(ctx, sourceId, filter, opts);
      if (entry === undefined)
        throw new CliUsageError(
          'name the entry to discard (the ENTRY dlq list shows), or a filter: --run, --error-class, --reason-match or --all',
        );
      return discardOne(ctx, sourceId, entry, opts.reason);
    });
}
