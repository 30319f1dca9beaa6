import type { Problem } from '../api/problems.js';
import type { PartitionView, RunView } from '../api/schemas/runs.js';
import { stringifyJson } from '../json/lossless.js';
import { humanDuration } from '../run/duration.js';
import { PARTITION_STATES } from '../run/model.js';
import { CliUsageError } from './errors.js';

/** Where the CLI writes: injectable so commands can be tested without a terminal. */
export interface Io {
  readonly out: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly err: NodeJS.WritableStream;
  /** Where questions are answered (`sources delete` asks on a terminal); none: nobody to ask. */
  readonly in?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** The fields `--json=a,b` selects: only these of the answer (of each item, for a list). */
  readonly jsonFields?: readonly string[];
}

/** The process's own streams. */
export const PROCESS_IO: Io = { out: process.stdout, err: process.stderr, in: process.stdin };

/**
 * Ends the process quietly, with exit 0, when the reader of `stream` goes away (`harvester items
 * list | head -1`): a closed pipe is how a reader says it has read enough, not an error worth a
 * stack trace. Installed once per stream.
 */
export function quietOnBrokenPipe(stream: NodeJS.WritableStream): void {
  const marked = stream as NodeJS.WritableStream & { harvesterQuietPipe?: true };
  if (marked.harvesterQuietPipe) return;
  marked.harvesterQuietPipe = true;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

/** Pretty JSON, for `--json` (machine-readable: nothing else goes to stdout); `--json=a,b` selects fields. */
export function printJson(io: Io, value: unknown): void {
  const selected = io.jsonFields ? selectFields(value, io.jsonFields) : value;
  io.out.write(`${stringifyJson(selected, 2)}\n`);
}

/**
 * The fields of an answer that `--json=a,b` asks for, as gh's `--json` selects them: of each item
 * of a list (its envelope — `nextCursor` and the like — kept whole), or of the answer itself. A
 * field no item (or the answer) has is refused with the fields there are.
 */
export function selectFields(value: unknown, fields: readonly string[]): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  const items = record.items;
  const rows = Array.isArray(items) ? (items as unknown[]) : null;
  const targets = rows ?? [record];
  const objects = targets.filter((t): t is Record<string, unknown> => typeof t === 'object' && t !== null);
  const known = new Set(objects.flatMap((o) => Object.keys(o)));
  const unknown = fields.filter((field) => !known.has(field));
  if (objects.length > 0 && unknown.length > 0) {
    throw new CliUsageError(
      `unknown JSON field${unknown.length === 1 ? '' : 's'} ${unknown.map((f) => `\`${f}\``).join(', ')}; the answer has: ${[...known].sort().join(', ')}`,
    );
  }
  const pick = (o: Record<string, unknown>) => Object.fromEntries(fields.map((f) => [f, o[f] ?? null]));
  if (rows === null) return pick(record);
  return { ...record, items: objects.map(pick) };
}

/** Plain lines. */
export function printLines(io: Io, lines: readonly string[]): void {
  io.out.write(`${lines.join('\n')}\n`);
}

/** A left-aligned table with a header row; empty tables print a note instead. */
export function printTable(
  io: Io,
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  empty = '(none)',
): void {
  if (rows.length === 0) {
    printLines(io, [empty]);
    return;
  }
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  printLines(io, [line(headers), ...rows.map(line)]);
}

/** `error: <title>: <detail>` plus one line per field error and the active run, on stderr. */
export function printProblem(io: Io, problem: Problem, hint: (args: string) => string = (a) => a): void {
  const lines = [`error: ${problem.title}: ${problem.detail}`];
  for (const e of problem.errors ?? []) lines.push(`  ${e.path || '(body)'}: ${e.message}`);
  if (problem.activeRunId) {
    // A busy source is the one the request named: its path is `/sources/{sourceId}/…`.
    const source = /^\/sources\/([^/]+)/.exec(problem.instance)?.[1];
    const watch = source ? `runs watch ${decodeURIComponent(source)} ${problem.activeRunId}` : undefined;
    lines.push(`  active run: ${problem.activeRunId}${watch ? `; follow it: ${hint(watch)}` : ''}`);
  }
  if (problem.status >= 500 && problem.requestId) lines.push(`  request id: ${problem.requestId}`);
  io.err.write(`${lines.join('\n')}\n`);
}

/** A run as `key: value` lines for a human. */
export function runLines(run: RunView): string[] {
  const lines = [
    `run        ${run.runId}`,
    `source     ${run.sourceId}`,
    `mode       ${run.mode}`,
    `state      ${run.state}`,
    `started by ${run.trigger}`,
    `progress   ${run.summary} (${run.progress.pages} pages)`,
    ...(run.durationSeconds === null
      ? []
      : [`duration   ${humanDuration(run.durationSeconds)}${run.finishedAt ? '' : ' so far'}`]),
    ...(run.heartbeatAgeSeconds === null ? [] : [`heartbeat  ${run.heartbeatAgeSeconds}s ago`]),
    `how        ${run.verdict} (${run.resume.reason}, ${run.resume.at})`,
    `epoch      ${run.epoch}, ${run.restarts} restarts`,
    `checkpoint ${run.checkpoint ? `page ${run.checkpoint.page} at ${run.checkpoint.at}` : 'none'}`,
  ];
  if (run.partitions) lines.push(...partitionLines(run.partitions));
  if (run.deferredUntil) lines.push(`deferred   until ${run.deferredUntil}`);
  if (run.waitingSince) lines.push(`waiting    in the page queue since ${run.waitingSince} (not crashed)`);
  if (run.failure) lines.push(`failure    ${run.failure.reason}: ${run.failure.message}`);
  lines.push(`created    ${run.createdAt}`);
  if (run.finishedAt) lines.push(`finished   ${run.finishedAt}`);
  return lines;
}

/**
 * A partitioned run's partitions: how many in each state, then one line each with its window,
 * position (next page, last checkpoint) and state.
 * @example
 * // partitions 4: 3 done, 1 running
 * //   #0  [start, 2026-01-01T00:01:16Z)  done     75 processed, 8 pages, checkpoint page 8 at …
 */
export function partitionLines(partitions: readonly PartitionView[]): string[] {
  const counts = PARTITION_STATES.map(
    (state) => [state, partitions.filter((p) => p.state === state).length] as const,
  )
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state}`);
  const lines = [`partitions ${partitions.length}: ${counts.join(', ')}`];
  for (const p of partitions) {
    const window = `[${p.window.from ?? 'start'}, ${p.window.until ?? 'open'})`;
    const position = p.checkpoint
      ? `checkpoint page ${p.checkpoint.page} at ${p.checkpoint.at}`
      : 'no checkpoint';
    const extra = [
      p.errorCount > 0 ? `${p.errorCount} errors` : undefined,
      p.tailFrom ? `tail from ${p.tailFrom}` : undefined,
      p.waitingSince ? `waiting since ${p.waitingSince}` : undefined,
      p.deferredUntil ? `deferred until ${p.deferredUntil}` : undefined,
    ].filter((part) => part !== undefined);
    lines.push(
      `  #${p.index}  ${window}  ${p.state.padEnd(7)}  ${p.processed} processed, ${p.pages} pages, next page ${p.nextPage}, ${position}${extra.length > 0 ? `; ${extra.join(', ')}` : ''}`,
    );
  }
  return lines;
}

/** One line per run for tables. */
export function runRow(run: RunView): string[] {
  return [run.runId, run.sourceId, run.mode, run.state, run.trigger, run.summary, run.createdAt];
}

/** The header of {@link runRow} tables. */
export const RUN_ROW_HEADERS = [
  'RUN',
  'SOURCE',
  'MODE',
  'STATE',
  'STARTED BY',
  'PROGRESS',
  'CREATED',
] as const;
