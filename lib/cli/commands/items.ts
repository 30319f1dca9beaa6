import type { Command } from 'commander';
import type { z } from 'zod';
import type { ItemExplanationSchema, ItemPageSchema, ItemViewSchema } from '../../api/schemas/items.js';
import { stringifyJson } from '../../json/lossless.js';
import { intInRange, MAX_LIST_LIMIT } from '../choices.js';
import { CliUsageError, contextOf } from '../context.js';
import { exportItems } from '../export.js';
import { examples } from '../help.js';
import { type Io, printJson, printLines, printTable } from '../output.js';

type ItemPage = z.infer<typeof ItemPageSchema>;
type ItemView = z.infer<typeof ItemViewSchema>;
type ItemExplanation = z.infer<typeof ItemExplanationSchema>;

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

function itemPath(sourceId: string, entityId?: string): string {
  const base = `/sources/${encodeURIComponent(sourceId)}/items`;
  return entityId === undefined ? base : `${base}/${encodeURIComponent(entityId)}`;
}

/** A time for `--changed-since`: ISO 8601 as given; a readable error otherwise. */
function isoTime(value: string): string {
  if (Number.isNaN(Date.parse(value)))
    throw new CliUsageError(
      `--changed-since must be an ISO 8601 time (2025-05-01T10:00:00Z), got "${value}"`,
    );
  return new Date(value).toISOString();
}

/** An entity and where it came from, as `key value` lines. */
export function itemLines(item: ItemView): string[] {
  const p = item.provenance;
  return [
    `entity     ${item.entityId}`,
    `version    ${item.version}`,
    `state      ${item.tombstonedAt ? `tombstoned at ${item.tombstonedAt} by run ${item.tombstonedBy ?? '?'}` : 'live'}`,
    `stored     ${p.storedAt} by ${p.mode ?? 'run'} run ${p.runId}${p.page === null ? '' : `, page ${p.page}`}${p.window ? ` (window ${p.window.from ?? '…'} – ${p.window.until ?? '…'})` : ''}`,
    `fetched    ${p.fetchedAt ?? 'unknown'}${p.request ? ` from ${p.request}` : ''}`,
    `first run  ${p.firstRunId ?? 'unknown'}`,
    `changed    ${item.changedAt ?? 'unknown'}`,
    `data       ${clip(stringifyJson(item.data), 400)}`,
  ];
}

/** What `items explain` prints: the status and its story, the dead letter (open or given up), failed pages, the item. */
export function explanationLines(story: ItemExplanation): string[] {
  const lines = [`${story.entityId}: ${story.status}`, story.summary];
  if (story.lastListed)
    lines.push(
      `last listed by ${story.lastListed.mode ?? 'run'} run ${story.lastListed.runId}${story.lastListed.page === null ? '' : `, page ${story.lastListed.page}`}${story.lastListed.at ? ` at ${story.lastListed.at}` : ''}`,
    );
  for (const entry of story.deadLetters)
    lines.push(`dead letter: ${entry.reason} (run ${entry.runId}, ${entry.attempts} attempts)`);
  if (story.discard)
    lines.push(
      `discarded: "${story.discard.reason}" by ${story.discard.by ?? 'the local API (no caller identity)'} at ${story.discard.at}`,
    );
  for (const entry of story.failedPages)
    lines.push(`failed page: ${clip(entry.ref || '(first page)', 60)}: ${entry.reason} (run ${entry.runId})`);
  if (story.item) lines.push('', ...itemLines(story.item));
  return lines;
}

/** `harvester items list|get|explain|export`. */
export function registerItemCommands(program: Command, io: Io): void {
  const items = program
    .command('items')
    .addHelpText('after', examples('items list acme', 'items export acme --output acme.jsonl'))
    .description('harvested entities: read, explain, export');

  items
    .command('list <sourceId>')
    .addHelpText(
      'after',
      examples(
        'items list acme',
        'items list acme --changed-since 2026-01-01T00:00:00Z --tombstoned',
        'items list acme --json | jq .items[].data',
      ),
    )
    .description("list a source's stored entities (with --changed-since: those changed since, oldest first)")
    .option(
      '--changed-since <time>',
      'only entities changed or tombstoned at or after this ISO time',
      isoTime,
    )
    .option('--tombstoned', 'include tombstoned entities')
    .option('--limit <n>', 'entities per page (1–100)', intInRange('--limit', 1, MAX_LIST_LIMIT), 25)
    .option('--cursor <cursor>', 'nextCursor of a previous page')
    .action(
      async (
        sourceId: string,
        opts: { changedSince?: string; tombstoned?: boolean; limit: number; cursor?: string },
        cmd: Command,
      ) => {
        const ctx = contextOf(cmd, io);
        const page = await (await ctx.client()).get<ItemPage>(itemPath(sourceId), {
          changedSince: opts.changedSince,
          includeTombstoned: opts.tombstoned ? 'true' : undefined,
          limit: opts.limit,
          cursor: opts.cursor,
        });
        // The API's page whole, like every list: a script pages on nextCursor and polls on
        // nextChangedSince (items export writes one entity a line).
        if (ctx.json) return printJson(io, page);
        printTable(
          io,
          ['ENTITY', 'VERSION', 'CHANGED', 'STATE', 'STORED BY RUN', 'DATA'],
          page.items.map((item) => [
            clip(item.entityId, 30),
            clip(item.version, 26),
            item.changedAt ?? '-',
            item.tombstonedAt ? 'tombstoned' : 'live',
            item.provenance.runId,
            clip(stringifyJson(item.data), 50),
          ]),
          'no stored entities',
        );
        const next: string[] = [];
        if (page.nextCursor) {
          const filters = `${opts.changedSince ? ` --changed-since ${opts.changedSince}` : ''}${opts.tombstoned ? ' --tombstoned' : ''}`;
          next.push(
            `more: ${ctx.hint(`items list ${sourceId}${filters} --limit ${opts.limit} --cursor ${page.nextCursor}`)}`,
          );
        }
        if (page.nextChangedSince) next.push(`next poll: --changed-since ${page.nextChangedSince}`);
        if (next.length > 0) printLines(io, next);
      },
    );

  items
    .command('get <sourceId> <entityId>')
    .addHelpText('after', examples('items get acme 42'))
    .description('one stored entity with its provenance')
    .action(async (sourceId: string, entityId: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const item = await (await ctx.client()).request<ItemView>('GET', itemPath(sourceId, entityId));
      if (ctx.json) return printJson(io, item);
      printLines(io, itemLines(item));
    });

  items
    .command('explain <sourceId> <entityId>')
    .addHelpText('after', examples('items explain acme 42'))
    .description('why an entity is stored as it is, stale, tombstoned or missing')
    .action(async (sourceId: string, entityId: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const story = await (await ctx.client()).request<ItemExplanation>(
        'GET',
        `${itemPath(sourceId, entityId)}/explain`,
      );
      if (ctx.json) return printJson(io, story);
      printLines(io, explanationLines(story));
    });

  items
    .command('export <sourceId>')
    .addHelpText(
      'after',
      examples('items export acme --output acme.jsonl', 'items export acme --output acme.jsonl --resume'),
    )
    .description('write every entity as JSON Lines, page by page; --resume continues an interrupted export')
    .requiredOption('--output <file>', 'the JSON Lines file to write')
    .option('--resume', 'continue from the last page written (its state is kept beside the file)')
    .option('--force', 'overwrite the output file if it exists')
    .option(
      '--changed-since <time>',
      'only entities changed or tombstoned at or after this ISO time',
      isoTime,
    )
    .option('--tombstoned', 'include tombstoned entities')
    .option(
      '--page-size <n>',
      'entities per request (1–100)',
      intInRange('--page-size', 1, MAX_LIST_LIMIT),
      100,
    )
    .action(
      async (
        sourceId: string,
        opts: {
          output: string;
          resume?: boolean;
          force?: boolean;
          changedSince?: string;
          tombstoned?: boolean;
          pageSize: number;
        },
        cmd: Command,
      ) => {
        const ctx = contextOf(cmd, io);
        const result = await exportItems(
          await ctx.client(),
          {
            sourceId,
            output: opts.output,
            resume: Boolean(opts.resume),
            force: Boolean(opts.force),
            changedSince: opts.changedSince,
            includeTombstoned: opts.tombstoned ? true : undefined,
            pageSize: opts.pageSize,
          },
          io,
        );
        if (ctx.json) return printJson(io, { output: opts.output, ...result });
        printLines(io, [
          `exported ${result.lines} entities in ${result.pages} pages to ${opts.output}${result.resumedFrom > 0 ? ` (resumed after ${result.resumedFrom} already written)` : ''}`,
        ]);
      },
    );
}
