import type { Problem } from '../api/problems.js';
import type { RunView } from '../api/schemas/runs.js';
import { humanDuration } from '../run/duration.js';

/** Where the CLI writes: injectable so commands can be tested without a terminal. */
export interface Io {
  readonly out: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly err: NodeJS.WritableStream;
}

/** The process's own streams. */
export const PROCESS_IO: Io = { out: process.stdout, err: process.stderr };

/** Pretty JSON, for `--json` (machine-readable: nothing else goes to stdout). */
export function printJson(io: Io, value: unknown): void {
  io.out.write(`${JSON.stringify(value, null, 2)}\n`);
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
  if (problem.activeRunId)
    lines.push(
      `  active run: ${problem.activeRunId}; follow it: ${hint(`runs watch ${problem.activeRunId}`)}`,
    );
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
  if (run.deferredUntil) lines.push(`deferred   until ${run.deferredUntil}`);
  if (run.waitingSince) lines.push(`waiting    in the page queue since ${run.waitingSince} (not crashed)`);
  if (run.failure) lines.push(`failure    ${run.failure.reason}: ${run.failure.message}`);
  lines.push(`created    ${run.createdAt}`);
  if (run.finishedAt) lines.push(`finished   ${run.finishedAt}`);
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
