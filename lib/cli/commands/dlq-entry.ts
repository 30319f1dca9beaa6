import type { Command } from 'commander';
import type { z } from 'zod';
import type { DeadLetterDetailSchema } from '../../api/schemas/dead-letters.js';
import { stringifyJson } from '../../json/lossless.js';
import { type CommandContext, contextOf } from '../context.js';
import { examples } from '../help.js';
import { type Io, printJson, printLines } from '../output.js';

type DeadLetterDetail = z.infer<typeof DeadLetterDetailSchema>;

/**
 * The entry id the API addresses: as `dlq list` shows it (`item#e-42`, `page#…`), or a bare
 * entity id, taken as the item entry of that entity (the common case: one record went wrong).
 */
export function entryIdOf(entry: string): string {
  return /^(item|page)#./.test(entry) ? entry : `item#${entry}`;
}

/** The API path of one dead letter. */
export function entryPath(sourceId: string, entry: string): string {
  return `/sources/${encodeURIComponent(sourceId)}/dead-letters/${encodeURIComponent(entryIdOf(entry))}`;
}

function indented(text: string): string[] {
  return text.split('\n').map((line) => `  ${line}`);
}

/** A dead letter in full, for a human: every field, the whole reason, the record, the history. */
export function deadLetterLines(entry: DeadLetterDetail): string[] {
  const lines = [
    `entry:     ${entry.entryId} (${entry.state})`,
    `kind:      ${entry.kind}`,
    `ref:       ${entry.ref || '(first page)'}`,
    `class:     ${entry.errorClass}`,
    `attempts:  ${entry.attempts}`,
    `first:     ${entry.firstFailedAt}`,
    `last:      ${entry.lastFailedAt} (run ${entry.runId}, page ${entry.page})`,
  ];
  if (entry.discard)
    lines.push(
      `discarded: ${entry.discard.at} by ${entry.discard.by ?? '(no IAM identity)'}: ${entry.discard.reason}`,
    );
  lines.push('reason:', ...indented(entry.reason));
  if (entry.record !== null && entry.record !== undefined)
    lines.push('record:', ...indented(stringifyJson(entry.record, 2)));
  else if (entry.excerpt !== null)
    lines.push('record (excerpt, not whole JSON):', ...indented(entry.excerpt));
  else lines.push('record:    (none kept)');
  lines.push('history:');
  for (const e of entry.history) {
    const where = e.runId ? ` run ${e.runId} page ${e.page}` : '';
    const who = e.event === 'discarded' ? ` by ${e.by ?? '(no IAM identity)'}: ${e.reason}` : '';
    lines.push(`  ${e.at}  ${e.event}${where}${who}`);
  }
  return lines;
}

async function show(ctx: CommandContext, sourceId: string, entry: string): Promise<void> {
  const detail = await (await ctx.client()).get<DeadLetterDetail>(entryPath(sourceId, entry));
  if (ctx.json) return printJson(ctx.io, detail);
  printLines(ctx.io, deadLetterLines(detail));
  if (detail.state === 'open')
    printLines(ctx.io, [
      `give up on it: ${ctx.hint(`dlq discard ${sourceId} '${detail.entryId}' --reason '…'`)}`,
    ]);
}

/** `harvester dlq show`: one dead letter in full (`dlq discard` is in dlq-discard.ts). */
export function registerDlqEntryCommands(dlq: Command, io: Io): void {
  dlq
    .command('show <sourceId> <entry>')
    .addHelpText(
      'after',
      examples(
        "dlq show acme 'item#e-000042'",
        'dlq show acme e-000042   # a bare entity id means its item entry',
      ),
    )
    .description(
      'one dead letter in full: the whole reason, the record as kept (exact JSON), attempts and history; <entry> is the ENTRY dlq list shows, or an entity id',
    )
    .action((sourceId: string, entry: string, _opts: unknown, cmd: Command) =>
      show(contextOf(cmd, io), sourceId, entry),
    );
}
