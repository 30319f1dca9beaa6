import type { Command } from 'commander';
import type { RunView } from '../../api/schemas/runs.js';
import { stringifyJson } from '../../json/lossless.js';
import { RETRY_FIXED_NOTHING, RUN_MODES, RUN_STATES } from '../../run/model.js';
import { MAX_PARTITIONS_LIMIT } from '../../run/partitions.js';
import { intInRange, MAX_LIST_LIMIT, oneOf } from '../choices.js';
import { CliUsageError, type CommandContext, contextOf } from '../context.js';
import { EXIT_CODES } from '../exit-codes.js';
import { examples } from '../help.js';
import { type Io, printJson, printLines, printTable, RUN_ROW_HEADERS, runLines, runRow } from '../output.js';
import { outcomeOf, runPath, watchRun } from '../watch.js';
import { registerRunEventsCommand } from './run-events.js';

/** Poll period of `--watch`, overridable for tests and slow links. */
function watchInterval(): number {
  const ms = Number(process.env.HARVESTER_WATCH_INTERVAL_MS);
  return Number.isFinite(ms) && ms > 0 ? ms : 1_000;
}

/** How a followed run's end is reported to a script: what `--fail-on-dead-letters` asks of it. */
export interface FollowOptions {
  /** A run that ended well but filed dead letters exits 3 (`EXIT_CODES.deadLetters`). */
  readonly failOnDeadLetters?: boolean;
}

/**
 * Watches a run to its end and prints how it ended. Sets a non-zero exit code when the run
 * failed or was cancelled, so scripts can `harvester runs start … --watch && next-step`, and,
 * with `--fail-on-dead-letters`, when it ended well but filed dead letters. With `--json` the
 * watch is a stream, one JSON document a line (NDJSON): `{"type":"run","run":…}` at the start
 * and at every change, then `{"type":"ended","ok":…,"exitCode":…,"run":…}`.
 */
export async function followRun(
  ctx: CommandContext,
  sourceId: string,
  runId: string,
  follow: FollowOptions = {},
): Promise<void> {
  const line = (value: unknown): void => {
    ctx.io.out.write(`${stringifyJson(value)}\n`);
  };
  const run = await watchRun(await ctx.client(), sourceId, runId, ctx.io, {
    intervalMs: watchInterval(),
    quiet: ctx.json,
    hint: ctx.hint,
    ...(ctx.json ? { onChange: (changed: RunView) => line({ type: 'run', run: changed }) } : {}),
  });
  const outcome = outcomeOf(run);
  const filed = run.outcome?.deadLettersFiled ?? run.errorCount;
  const exitCode = !outcome.ok
    ? EXIT_CODES.failed
    : follow.failOnDeadLetters && filed > 0
      ? EXIT_CODES.deadLetters
      : EXIT_CODES.ok;
  if (exitCode !== EXIT_CODES.ok) process.exitCode = exitCode;
  if (ctx.json) return line({ type: 'ended', ok: exitCode === EXIT_CODES.ok, exitCode, run });
  if (exitCode === EXIT_CODES.deadLetters)
    return printLines(ctx.io, [
      outcome.line,
      `${filed} dead ${filed === 1 ? 'letter' : 'letters'} filed (--fail-on-dead-letters): ${ctx.hint(`dlq list ${run.sourceId} --run ${run.runId}`)}`,
    ]);
  const { line: text, ok } = outcome;
  if (
    !ok &&
    run.mode === 'dlq_retry' &&
    (run.state === 'succeeded' || run.failure?.reason === RETRY_FIXED_NOTHING)
  )
    printLines(ctx.io, [text, `see why: ${ctx.hint(`dlq list ${run.sourceId}`)}`]);
  else printLines(ctx.io, [text]);
}

/** Prints a freshly started run, then follows it when asked. */
export async function reportStarted(
  ctx: CommandContext,
  run: RunView,
  watch: boolean,
  follow: FollowOptions = {},
): Promise<void> {
  if (watch) {
    if (!ctx.json) printLines(ctx.io, [`started run ${run.runId} (${run.mode}) of ${run.sourceId}`]);
    return followRun(ctx, run.sourceId, run.runId, follow);
  }
  if (ctx.json) return printJson(ctx.io, run);
  printLines(ctx.io, [
    `started run ${run.runId} (${run.mode}) of ${run.sourceId}`,
    `follow it: ${ctx.hint(`runs watch ${run.sourceId} ${run.runId}`)}`,
  ]);
}

function listArgs(
  sourceId: string | undefined,
  opts: { state?: string; limit: number },
  cursor: string,
): string {
  const state = opts.state ? ` --state ${opts.state}` : '';
  return `runs list${sourceId ? ` ${sourceId}` : ''}${state} --limit ${opts.limit} --cursor ${cursor}`;
}

/** `harvester runs start|get|list|cancel|events|watch`. */
export function registerRunCommands(program: Command, io: Io): void {
  const runs = program
    .command('runs')
    .addHelpText('after', examples('runs start acme --mode full --watch', 'runs list --state running'))
    .description('start and follow runs');

  runs
    .command('start <sourceId>')
    .addHelpText(
      'after',
      examples(
        'runs start acme --mode full --watch',
        'runs start acme --mode incremental',
        'runs start acme --mode full --partitions 4',
      ),
    )
    .description('start a run (409 names the active run if one is going)')
    .requiredOption('--mode <mode>', `one of ${RUN_MODES.join(', ')}`, oneOf('--mode', RUN_MODES))
    .option('--watch', 'follow the run with a live progress bar until it ends')
    .option(
      '--fail-on-dead-letters',
      `with --watch: exit ${EXIT_CODES.deadLetters} when the run succeeded but filed dead letters (for CI)`,
    )
    .option(
      '--partitions <k>',
      'split the run into at most k partitions (default: the stack setting); 1 reads one stream',
      intInRange('--partitions', 1, MAX_PARTITIONS_LIMIT),
    )
    .action(
      async (
        sourceId: string,
        opts: { mode: string; watch?: boolean; partitions?: number; failOnDeadLetters?: boolean },
        cmd: Command,
      ) => {
        const ctx = contextOf(cmd, io);
        if (opts.failOnDeadLetters && !opts.watch)
          throw new CliUsageError(
            '--fail-on-dead-letters needs --watch: without it the run is not followed to its end',
          );
        const run = await (await ctx.client()).request<RunView>(
          'POST',
          `/sources/${encodeURIComponent(sourceId)}/runs`,
          {
            mode: opts.mode,
            ...(opts.partitions !== undefined ? { partitions: opts.partitions } : {}),
          },
        );
        await reportStarted(ctx, run, Boolean(opts.watch), { failOnDeadLetters: opts.failOnDeadLetters });
      },
    );

  runs
    .command('get <sourceId> <runId>')
    .addHelpText('after', examples('runs get acme 01JD5W9Q3R8V2K7T6Y4X1Z0ABC'))
    .description(
      'show a run of a source: state, progress, dead letters, heartbeat, checkpoint, resume verdict',
    )
    .action(async (sourceId: string, runId: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const run = await (await ctx.client()).get<RunView>(runPath(sourceId, runId));
      if (ctx.json) return printJson(io, run);
      printLines(io, runLines(run));
    });

  runs
    .command('list [sourceId]')
    .addHelpText('after', examples('runs list acme', 'runs list --state failed', 'runs list acme --limit 5'))
    .description("list a source's runs, newest first; without a source, every source's (use --state)")
    .option(
      '--state <state>',
      `only runs in this state: ${RUN_STATES.join(', ')}`,
      oneOf('--state', RUN_STATES),
    )
    .option('--limit <n>', 'runs per page (1–100)', intInRange('--limit', 1, MAX_LIST_LIMIT), 20)
    .option('--cursor <cursor>', 'nextCursor of a previous page')
    .action(
      async (
        sourceId: string | undefined,
        opts: { state?: string; limit: number; cursor?: string },
        cmd: Command,
      ) => {
        const ctx = contextOf(cmd, io);
        if (sourceId && opts.state)
          throw new CliUsageError('--state lists across sources; drop the source id, or drop --state');
        const page = await (await ctx.client()).get<{ items: RunView[]; nextCursor: string | null }>(
          sourceId ? `/sources/${encodeURIComponent(sourceId)}/runs` : '/runs',
          { limit: opts.limit, cursor: opts.cursor, state: opts.state },
        );
        if (ctx.json) return printJson(io, page);
        printTable(
          io,
          RUN_ROW_HEADERS,
          page.items.map(runRow),
          page.nextCursor ? 'none on this page' : 'no runs',
        );
        if (page.nextCursor) printLines(io, [`more: ${ctx.hint(listArgs(sourceId, opts, page.nextCursor))}`]);
      },
    );

  runs
    .command('cancel <sourceId> <runId>')
    .addHelpText('after', examples('runs cancel acme 01JD5W9Q3R8V2K7T6Y4X1Z0ABC'))
    .description('cancel a run of a source (terminal: it is never resumed)')
    .action(async (sourceId: string, runId: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const run = await (await ctx.client()).request<RunView>('POST', `${runPath(sourceId, runId)}/cancel`);
      if (ctx.json) return printJson(io, run);
      printLines(io, [`cancelled run ${run.runId}: ${run.summary}`]);
    });

  registerRunEventsCommand(runs, io);

  runs
    .command('watch <sourceId> <runId>')
    .addHelpText('after', examples('runs watch acme 01JD5W9Q3R8V2K7T6Y4X1Z0ABC'))
    .description(
      'follow a run until it ends; exits 1 if it failed, was cancelled, or retried and left dead letters failing',
    )
    .option(
      '--fail-on-dead-letters',
      `exit ${EXIT_CODES.deadLetters} when the run succeeded but filed dead letters (for CI)`,
    )
    .action(async (sourceId: string, runId: string, opts: { failOnDeadLetters?: boolean }, cmd: Command) =>
      followRun(contextOf(cmd, io), sourceId, runId, { failOnDeadLetters: opts.failOnDeadLetters }),
    );
}
