import type { Command } from 'commander';
import type { RunView } from '../../api/schemas/runs.js';
import { RETRY_FIXED_NOTHING, RUN_MODES, RUN_STATES } from '../../run/model.js';
import { MAX_PARTITIONS_LIMIT } from '../../run/partitions.js';
import { intInRange, MAX_LIST_LIMIT, oneOf } from '../choices.js';
import { CliUsageError, type CommandContext, contextOf } from '../context.js';
import { examples } from '../help.js';
import { type Io, printJson, printLines, printTable, RUN_ROW_HEADERS, runLines, runRow } from '../output.js';
import { outcomeOf, runPath, watchRun } from '../watch.js';

/** Poll period of `--watch`, overridable for tests and slow links. */
function watchInterval(): number {
  const ms = Number(process.env.HARVESTER_WATCH_INTERVAL_MS);
  return Number.isFinite(ms) && ms > 0 ? ms : 1_000;
}

/**
 * Watches a run to its end and prints how it ended. Sets a non-zero exit code when the run
 * failed or was cancelled, so scripts can `harvester runs start … --watch && next-step`.
 */
export async function followRun(ctx: CommandContext, sourceId: string, runId: string): Promise<void> {
  const run = await watchRun(await ctx.client(), sourceId, runId, ctx.io, {
    intervalMs: watchInterval(),
    quiet: ctx.json,
    hint: ctx.hint,
  });
  const { line, ok } = outcomeOf(run);
  if (ctx.json) printJson(ctx.io, run);
  else if (
    !ok &&
    run.mode === 'dlq_retry' &&
    (run.state === 'succeeded' || run.failure?.reason === RETRY_FIXED_NOTHING)
  )
    printLines(ctx.io, [line, `see why: ${ctx.hint(`dlq list ${run.sourceId}`)}`]);
  else printLines(ctx.io, [line]);
  if (!ok) process.exitCode = 1;
}

/** Prints a freshly started run, then follows it when asked. */
export async function reportStarted(ctx: CommandContext, run: RunView, watch: boolean): Promise<void> {
  if (watch) {
    if (!ctx.json) printLines(ctx.io, [`started run ${run.runId} (${run.mode}) of ${run.sourceId}`]);
    return followRun(ctx, run.sourceId, run.runId);
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

/** `harvester runs start|get|list|cancel|watch`. */
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
      '--partitions <k>',
      'split the run into at most k partitions (default: the stack setting); 1 reads one stream',
      intInRange('--partitions', 1, MAX_PARTITIONS_LIMIT),
    )
    .action(
      async (
        sourceId: string,
        opts: { mode: string; watch?: boolean; partitions?: number },
        cmd: Command,
      ) => {
        const ctx = contextOf(cmd, io);
        const run = await (await ctx.client()).request<RunView>(
          'POST',
          `/sources/${encodeURIComponent(sourceId)}/runs`,
          {
            mode: opts.mode,
            ...(opts.partitions !== undefined ? { partitions: opts.partitions } : {}),
          },
        );
        await reportStarted(ctx, run, Boolean(opts.watch));
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

  runs
    .command('watch <sourceId> <runId>')
    .addHelpText('after', examples('runs watch acme 01JD5W9Q3R8V2K7T6Y4X1Z0ABC'))
    .description(
      'follow a run until it ends; exits 1 if it failed, was cancelled, or retried and left dead letters failing',
    )
    .action(async (sourceId: string, runId: string, _opts: unknown, cmd: Command) =>
      followRun(contextOf(cmd, io), sourceId, runId),
    );
}
