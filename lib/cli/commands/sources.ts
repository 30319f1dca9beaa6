import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { z } from 'zod';
import type { DeletedSourceSchema, SourcePageSchema, SourceViewSchema } from '../../api/schemas/sources.js';
import type { SourceTestResult } from '../../api/source-test.js';
import { stringifyJson } from '../../json/lossless.js';
import { RUN_MODES } from '../../run/model.js';
import { CONNECTOR_CHOICES, closest, intInRange, MAX_LIST_LIMIT, oneOf } from '../choices.js';
import { confirm } from '../confirm.js';
import { CliUsageError, collect, contextOf } from '../context.js';
import { examples } from '../help.js';
import { type Io, printJson, printLines, printTable } from '../output.js';
import { nextFireWords, registerPauseCommands, scheduleLines } from './source-pause.js';

type SourceView = z.infer<typeof SourceViewSchema>;
type DeletedSource = z.infer<typeof DeletedSourceSchema>;
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

/**
 * `rate(1 hour):incremental` → { expression, mode }. The mode is required: which runs a schedule
 * starts (a full re-read or only what changed) is too important to default silently.
 */
export function parseScheduleOption(value: string): { expression: string; mode: string } {
  const colon = value.lastIndexOf(':');
  const mode = colon < 0 ? '' : value.slice(colon + 1).trim();
  if (
    colon >= 0 &&
    mode !== '' &&
    !value.trimEnd().endsWith(')') &&
    !(RUN_MODES as readonly string[]).includes(mode)
  ) {
    const guess = closest(mode, RUN_MODES);
    throw new CliUsageError(
      `--schedule "${value}": "${mode}" is not a mode (one of ${RUN_MODES.join(', ')})${guess ? `; did you mean "${value.slice(0, colon)}:${guess}"?` : ''}`,
    );
  }
  if (colon < 0 || value.trimEnd().endsWith(')') || !(RUN_MODES as readonly string[]).includes(mode))
    throw new CliUsageError(
      `--schedule "${value}" needs a mode after the expression, e.g. "${value.trim().replace(/:[^)]*$/, '')}:incremental" (one of ${RUN_MODES.join(', ')})`,
    );
  return { expression: value.slice(0, colon).trim(), mode };
}

function testLines(result: SourceTestResult): string[] {
  const rate = result.rateLimit
    ? `${result.rateLimit.remaining ?? '?'} of ${result.rateLimit.limit ?? '?'} requests left${result.rateLimit.resetAt ? `, resets ${result.rateLimit.resetAt}` : ''}`
    : 'the source sends no rate-limit headers';
  const lines = [
    result.request.url === null
      ? `FAILED: no request made (${result.request.durationMs} ms)`
      : result.request.status === null
        ? `FAILED: ${result.request.url} did not answer (${result.request.durationMs} ms): ${result.problem?.reason ?? 'no answer'}`
        : `${result.ok ? 'ok' : 'FAILED'}: ${result.request.url} answered ${result.request.status} in ${result.request.durationMs} ms`,
    `auth       ${authWords(result)}`,
    `rate       ${rate}`,
  ];
  if (result.page)
    lines.push(
      `first page ${result.page.items} records${result.page.total === null ? '' : ` of ${result.page.total}`}, ${result.page.hasNextPage ? 'more pages follow' : 'the only page'}${result.invalidOnPage > 0 ? `; ${result.invalidOnPage} would be dead letters` : ''}`,
    );
  if (result.sample)
    lines.push(
      `sample     ${result.sample.id} (version ${result.sample.version}): ${clip(stringifyJson(result.sample.data), 200)}`,
    );
  if (result.problem) lines.push(`problem    ${result.problem.errorClass}: ${result.problem.reason}`);
  return lines;
}

const AUTH_WORDS: Record<SourceTestResult['auth'], string> = {
  accepted: 'credentials accepted',
  refused: 'credentials REFUSED (401/403)',
  not_configured: 'no credentials configured',
  unknown: 'credentials sent; the request failed before the source judged them',
};

/** What happened to the credentials, from what was actually sent and answered. */
function authWords(result: SourceTestResult): string {
  const status = result.request.status;
  if (result.auth === 'not_configured' && (status === 401 || status === 403))
    return `no credentials configured, and the source answered ${status}: it wants some (name a secret in the config; see docs/connectors.md)`;
  if (result.auth === 'unknown' && result.request.url === null)
    return 'credentials not sent: no request was made (see problem)';
  return AUTH_WORDS[result.auth];
}

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

function sourceLines(source: SourceView): string[] {
  return [
    `source     ${source.sourceId}`,
    `connector  ${source.connector}`,
    `config     ${JSON.stringify(source.config)}`,
    ...scheduleLines(source),
    `watermark  ${source.watermark ?? 'none'}`,
    `active run ${source.activeRunId ?? 'none'}`,
    `updated    ${source.updatedAt}`,
  ];
}

/** `harvester sources put|get|list|delete`. */
export function registerSourceCommands(program: Command, io: Io): void {
  const sources = program
    .command('sources')
    .addHelpText(
      'after',
      examples(
        'sources put acme --connector rest-json --config @acme.json --schedule "rate(1 hour):incremental"',
        'sources test acme',
        'sources list',
      ),
    )
    .description('configure sources');

  sources
    .command('put <sourceId>')
    .addHelpText(
      'after',
      examples(
        'sources put acme --connector rest-json --config @acme.json',
        'sources put acme --connector github-issues --config \'{"owner":"acme","repo":"widgets"}\' --schedule "rate(1 hour):incremental" --schedule "cron(0 3 ? * SUN *):full"',
      ),
    )
    .description('create or replace a source (schedules are replaced as a whole)')
    .requiredOption(
      '--connector <name>',
      `connector name: ${CONNECTOR_CHOICES.join(', ')}`,
      oneOf('--connector', CONNECTOR_CHOICES),
    )
    .requiredOption('--config <json|@file>', 'connector config as JSON, or @path to a JSON file')
    .option(
      '--schedule <expression:mode>',
      'recurring schedule with the mode of the runs it starts, e.g. "rate(1 hour):incremental" (repeatable)',
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
          `check the connection: ${ctx.hint(`sources test ${source.sourceId}`)}`,
        ]);
      },
    );

  sources
    .command('schedule <sourceId>')
    .addHelpText(
      'after',
      examples(
        'sources schedule acme --schedule "rate(30 minutes):incremental"',
        'sources schedule acme   # no --schedule: removes every schedule',
      ),
    )
    .description("replace a source's schedules alone (the config stays); no --schedule removes them all")
    .option(
      '--schedule <expression:mode>',
      'recurring schedule with the mode of the runs it starts, e.g. "cron(0 3 * * ? *):full" (repeatable)',
      collect,
      [],
    )
    .action(async (sourceId: string, opts: { schedule: string[] }, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const source = await (await ctx.client()).request<SourceView>(
        'PUT',
        `/sources/${encodeURIComponent(sourceId)}/schedules`,
        { schedules: opts.schedule.map(parseScheduleOption) },
      );
      if (ctx.json) return printJson(io, source);
      printLines(io, [`schedules of ${source.sourceId} replaced`, ...sourceLines(source)]);
    });

  sources
    .command('test <sourceId>')
    .addHelpText('after', examples('sources test acme', 'sources test acme --json'))
    .description(
      'check the connection: fetch the first page once (auth, rate budget, a sample entity); exits 1 if it fails',
    )
    .action(async (sourceId: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const result = await (await ctx.client()).request<SourceTestResult>(
        'POST',
        `/sources/${encodeURIComponent(sourceId)}/test`,
      );
      if (!result.ok) process.exitCode = 1;
      if (ctx.json) return printJson(io, result);
      printLines(io, testLines(result));
      if (result.ok)
        printLines(io, [`start a run: ${ctx.hint(`runs start ${sourceId} --mode full --watch`)}`]);
    });

  sources
    .command('get <sourceId>')
    .addHelpText('after', examples('sources get acme', 'sources get acme --json'))
    .description('show a source')
    .action(async (sourceId: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const source = await (await ctx.client()).get<SourceView>(`/sources/${encodeURIComponent(sourceId)}`);
      if (ctx.json) return printJson(io, source);
      printLines(io, sourceLines(source));
    });

  sources
    .command('list')
    .addHelpText('after', examples('sources list', 'sources list --limit 10 --cursor <nextCursor>'))
    .description('list sources')
    .option('--limit <n>', 'sources per page (1–100)', intInRange('--limit', 1, MAX_LIST_LIMIT), 100)
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
        ['SOURCE', 'CONNECTOR', 'SCHEDULES', 'NEXT FIRE', 'LAST RUN', 'LAST SUCCESS', 'ACTIVE RUN'],
        page.items.map((s) => [
          s.sourceId,
          s.connector,
          String(s.schedules.length),
          nextFireWords(s),
          s.lastRun ? `${s.lastRun.state} ${s.lastRun.createdAt}` : '-',
          s.lastSuccess ? (s.lastSuccess.finishedAt ?? s.lastSuccess.createdAt) : '-',
          s.activeRunId ?? '-',
        ]),
        'no sources',
      );
      if (page.nextCursor) printLines(io, [`more: --cursor ${page.nextCursor}`]);
    });

  registerPauseCommands(sources, io);

  sources
    .command('delete <sourceId>')
    .addHelpText(
      'after',
      examples('sources delete acme', 'sources delete acme --yes   # no question asked (scripts)'),
    )
    .description(
      'delete a source with its schedules, runs and dead letters (refused while a run is active); asks first',
    )
    .option('-y, --yes', 'do not ask (needed when no terminal can answer, e.g. in scripts)')
    .action(async (sourceId: string, opts: { yes?: boolean }, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const question = `delete source ${sourceId} with its schedules, run history and dead letters?`;
      if (!(await confirm(io, question, { yes: opts.yes, flag: '--yes' })))
        return printLines(io, [`kept source ${sourceId}: nothing deleted`]);
      const result = await (await ctx.client()).request<DeletedSource>(
        'DELETE',
        `/sources/${encodeURIComponent(sourceId)}`,
      );
      if (ctx.json) return printJson(io, result);
      const { schedules, runs, deadLetters } = result.deleted;
      printLines(io, [
        `deleted source ${sourceId} with ${schedules} schedules, ${runs} runs and ${deadLetters} dead letters; its harvested items are kept`,
      ]);
    });
}
