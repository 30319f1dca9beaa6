import type { Command } from 'commander';
import type { z } from 'zod';
import type { SourceViewSchema } from '../../api/schemas/sources.js';
import { contextOf } from '../context.js';
import { examples } from '../help.js';
import { type Io, printJson, printLines } from '../output.js';

type SourceView = z.infer<typeof SourceViewSchema>;

/**
 * A run of the source's history in a few words, with the outcome fixed at its end:
 * `01J… succeeded (full) 2026-…: 485/500 processed, 15 dead letters filed`.
 */
export function runWords(run: SourceView['lastRun']): string {
  if (!run) return 'none';
  const o = run.outcome;
  const total = o && o.sourceTotal !== null && o.sourceTotal !== o.processed ? `/${o.sourceTotal}` : '';
  const figures = o
    ? `: ${o.processed}${total} processed, ${o.deadLettersFiled} dead ${o.deadLettersFiled === 1 ? 'letter' : 'letters'} filed`
    : '';
  return `${run.runId} ${run.state} (${run.mode}) ${run.finishedAt ?? run.createdAt}${figures}`;
}

/** A schedule's line: expression, mode, and when it fires next (or why it does not). */
function scheduleWords(schedule: SourceView['schedules'][number]): string {
  const when =
    schedule.state === 'DISABLED'
      ? 'paused'
      : schedule.state === 'MISSING'
        ? 'missing from Scheduler: repeat `sources schedule` to restore it'
        : schedule.nextFireAt
          ? `next ${schedule.nextFireAt}`
          : 'never fires again';
  return `${schedule.expression} → ${schedule.mode} (${when})`;
}

/** The schedule and history lines of `sources get`: each schedule's next fire, the last run and success. */
export function scheduleLines(source: SourceView): string[] {
  const [first, ...rest] = source.schedules;
  return [
    `schedules  ${first ? scheduleWords(first) : 'none'}${source.paused ? `; paused since ${source.pausedAt}` : ''}`,
    ...rest.map((s) => `           ${scheduleWords(s)}`),
    `last run   ${runWords(source.lastRun)}`,
    `last ok    ${runWords(source.lastSuccess)}`,
  ];
}

/** The soonest next fire time of a source's schedules, for `sources list`. */
export function nextFireWords(source: SourceView): string {
  if (source.schedules.length === 0) return '-';
  if (source.paused) return 'paused';
  const times = source.schedules.flatMap((s) => (s.nextFireAt ? [s.nextFireAt] : [])).sort();
  return times[0] ?? 'never';
}

/** `harvester sources pause|resume`. */
export function registerPauseCommands(sources: Command, io: Io): void {
  for (const action of ['pause', 'resume'] as const) {
    sources
      .command(`${action} <sourceId>`)
      .addHelpText('after', examples(`sources ${action} acme`))
      .description(
        action === 'pause'
          ? "pause a source's schedules (Scheduler holds them DISABLED); runs started by hand still work"
          : "resume a paused source's schedules; a rate() counts its periods from now",
      )
      .action(async (sourceId: string, _opts: unknown, cmd: Command) => {
        const ctx = contextOf(cmd, io);
        const source = await (await ctx.client()).request<SourceView>(
          'POST',
          `/sources/${encodeURIComponent(sourceId)}/${action}`,
        );
        if (ctx.json) return printJson(io, source);
        printLines(io, [
          `${action === 'pause' ? 'paused' : 'resumed'} the schedules of ${source.sourceId}`,
          ...scheduleLines(source),
        ]);
        if (action === 'pause' && source.schedules.length > 0)
          printLines(io, [`resume them: ${ctx.hint(`sources resume ${sourceId}`)}`]);
      });
  }
}
