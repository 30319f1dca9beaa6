import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { z } from 'zod';
import type { SourcePageSchema, SourceViewSchema } from '../../api/schemas/sources.js';
import { CliUsageError, collect, contextOf, positiveInt } from '../context.js';
import { type Io, printJson, printLines, printTable } from '../output.js';

type SourceView = z.infer<typeof SourceViewSchema>;
type SourcePage = z.infer<typeof SourcePageSchema>;

/** `--config '{"url":…}'` or `--config @config.json`. */
export function readConfigOption(value: string): Record<string, unknown> {
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = readFileSync(value.slice(1), 'utf8');
    } catch (error) {
      throw new CliUsageError(`cannot read --config file ${value.slice(1)}: ${(error as Error).message}`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliUsageError(`--config is not valid JSON: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new CliUsageError('--config must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** `rate(1 hour):incremental` → { expression, mode }; the mode defaults to incremental. */
export function parseScheduleOption(value: string): { expression: string; mode: string } {
  const colon = value.lastIndexOf(':');
  if (colon < 0 || value.endsWith(')')) return { expression: value.trim(), mode: 'incremental' };
  return { expression: value.slice(0, colon).trim(), mode: value.slice(colon + 1).trim() };
}

function sourceLines(source: SourceView): string[] {
  return [
    `source     ${source.sourceId}`,
    `connector  ${source.connector}`,
    `config     ${JSON.stringify(source.config)}`,
    `schedules  ${source.schedules.length === 0 ? 'none' : source.schedules.map((s) => `${s.expression} → ${s.mode}`).join(', ')}`,
    `watermark  ${source.watermark ?? 'none'}`,
    `active run ${source.activeRunId ?? 'none'}`,
    `updated    ${source.updatedAt}`,
  ];
}

/** `harvester sources put|get|list|delete`. */
export function registerSourceCommands(program: Command, io: Io): void {
  const sources = program.command('sources').description('configure sources');

  sources
    .command('put <sourceId>')
    .description('create or replace a source (schedules are replaced as a whole)')
    .requiredOption('--connector <name>', 'connector name: rest-json, github-issues')
    .requiredOption('--config <json|@file>', 'connector config as JSON, or @path to a JSON file')
    .option(
      '--schedule <expression:mode>',
      'recurring schedule, e.g. "rate(1 hour):incremental" (repeatable)',
      collect,
      [],
    )
    .action(
      async (
        sourceId: string,
        opts: { connector: string; config: string; schedule: string[] },
        cmd: Command,
      ) => {
        const ctx = contextOf(cmd, io);
        const body = {
          connector: opts.connector,
          config: readConfigOption(opts.config),
          schedules: opts.schedule.map(parseScheduleOption),
        };
        const client = await ctx.client();
        const { status, body: source } = await client.send<SourceView>(
          'PUT',
          `/sources/${encodeURIComponent(sourceId)}`,
          body,
        );
        if (ctx.json) return printJson(io, source);
        printLines(io, [
          `${status === 201 ? 'created' : 'updated'} source ${source.sourceId}`,
          ...sourceLines(source),
        ]);
      },
    );

  sources
    .command('get <sourceId>')
    .description('show a source')
    .action(async (sourceId: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const source = await (await ctx.client()).get<SourceView>(`/sources/${encodeURIComponent(sourceId)}`);
      if (ctx.json) return printJson(io, source);
      printLines(io, sourceLines(source));
    });

  sources
    .command('list')
    .description('list sources')
    .option('--limit <n>', 'sources per page (1–100)', positiveInt('--limit'), 100)
    .option('--cursor <cursor>', 'nextCursor of a previous page')
    .action(async (opts: { limit: number; cursor?: string }, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const page = await (await ctx.client()).get<SourcePage>('/sources', {
        limit: opts.limit,
        cursor: opts.cursor,
      });
      if (ctx.json) return printJson(io, page);
      printTable(
        io,
        ['SOURCE', 'CONNECTOR', 'SCHEDULES', 'ACTIVE RUN'],
        page.items.map((s) => [s.sourceId, s.connector, String(s.schedules.length), s.activeRunId ?? '-']),
        'no sources',
      );
      if (page.nextCursor) printLines(io, [`more: --cursor ${page.nextCursor}`]);
    });

  sources
    .command('delete <sourceId>')
    .description('delete a source and its schedules (refused while a run is active)')
    .action(async (sourceId: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      await (await ctx.client()).request('DELETE', `/sources/${encodeURIComponent(sourceId)}`);
      if (ctx.json) return printJson(io, { deleted: sourceId });
      printLines(io, [`deleted source ${sourceId}`]);
    });
}
