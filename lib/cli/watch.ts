import { Presets, SingleBar } from 'cli-progress';
import type { RunView } from '../api/schemas/runs.js';
import { humanDuration } from '../run/duration.js';
import { isTerminal } from '../run/model.js';
import { type ApiClient, ApiUnreachableError } from './client.js';
import { EXIT_CODES } from './exit-codes.js';
import type { Io } from './output.js';

/** Options of {@link watchRun}. */
export interface WatchOptions {
  /** Poll period. Default 1 s. */
  readonly intervalMs?: number;
  /** Force the line-per-change output even on a terminal. */
  readonly plain?: boolean;
  /** Print nothing while watching (`--json`: the caller prints, through {@link WatchOptions.onChange}). */
  readonly quiet?: boolean;
  /** Called with the run at the first poll and at every change (not the heartbeat age alone). */
  readonly onChange?: (run: RunView) => void;
  /** Turns CLI arguments into a command the user can paste (names the API's endpoint). */
  readonly hint?: (args: string) => string;
}

/** Consecutive failed polls tolerated before giving up (a restarting local API, a network blip). */
const MAX_POLL_FAILURES = 5;

function totalLabel(run: RunView): string {
  // Ended: the source's own total when it stated one (485/500 keeps the 500), else the count.
  if (run.outcome?.fixed) return String(run.outcome.sourceTotal ?? run.outcome.processed);
  if (run.progress.total === null) return '?';
  return run.progress.totalIsEstimate ? `~${run.progress.total}` : String(run.progress.total);
}

/** The bar's dead-letter figure: the live K while the run goes, the fixed count once it ended. */
function deadLetterLabel(run: RunView): string {
  return run.outcome?.fixed
    ? `${run.outcome.deadLettersFiled} dead letters filed`
    : `${run.openDeadLetters} in DLQ`;
}

/** One status line in plain words: state, progress, K in DLQ, heartbeat while running, how it started. */
export function statusLine(run: RunView): string {
  const parts = [`${run.state.padEnd(9)} ${run.summary}`];
  if (run.heartbeatAgeSeconds !== null) parts.push(`last heartbeat ${run.heartbeatAgeSeconds}s ago`);
  parts.push(run.verdict);
  if (run.deferredUntil) parts.push(`paused (rate limit) until ${run.deferredUntil}`);
  return parts.join(' · ');
}

/** What changes the plain output: everything but the heartbeat age, which changes every second. */
function changeKey(run: RunView): string {
  return JSON.stringify([
    run.state,
    run.progress,
    run.openDeadLetters,
    run.resume,
    run.epoch,
    run.deferredUntil,
  ]);
}

/**
 * Follows a run until it ends, polling `GET /sources/{sourceId}/runs/{runId}` (the path a source
 * owner may read). On a terminal, a live progress bar;
 * otherwise one timestamped line per change. Resolves the final run.
 */
export async function watchRun(
  client: ApiClient,
  sourceId: string,
  runId: string,
  io: Io,
  options: WatchOptions = {},
): Promise<RunView> {
  const interval = options.intervalMs ?? 1_000;
  const live = !options.quiet && !options.plain && Boolean(io.out.isTTY);
  const bar = live
    ? new SingleBar(
        {
          format: '{state} [{bar}] {value}/{totalLabel} · {dlq} · {heartbeat}{verdict}',
          hideCursor: true,
          stream: io.out,
          barsize: 30,
        },
        Presets.shades_classic,
      )
    : undefined;
  let lastKey = '';
  let failures = 0;
  const stopOnSignal = () => {
    bar?.stop();
    io.err.write(`${interruptedLines(sourceId, runId, options.hint).join('\n')}\n`);
    process.exit(EXIT_CODES.cancelled);
  };
  process.once('SIGINT', stopOnSignal);
  try {
    for (;;) {
      let run: RunView;
      try {
        run = await client.request<RunView>('GET', runPath(sourceId, runId));
        failures = 0;
      } catch (error) {
        if (!(error instanceof ApiUnreachableError) || ++failures >= MAX_POLL_FAILURES) throw error;
        await sleep(interval);
        continue;
      }
      const payload = {
        state: run.state.padEnd(9),
        totalLabel: totalLabel(run),
        dlq: deadLetterLabel(run),
        heartbeat:
          run.heartbeatAgeSeconds === null ? '' : `last heartbeat ${run.heartbeatAgeSeconds}s ago · `,
        verdict: run.verdict,
      };
      const total =
        (run.outcome?.fixed ? run.outcome.sourceTotal : null) ??
        run.progress.total ??
        Math.max(run.progress.processed, 1);
      if (bar) {
        if (lastKey === '') bar.start(total, run.progress.processed, payload);
        bar.setTotal(total);
        bar.update(run.progress.processed, payload);
      } else if (!options.quiet && changeKey(run) !== lastKey) {
        io.out.write(`${new Date().toISOString().slice(11, 19)} ${statusLine(run)}\n`);
      }
      if (changeKey(run) !== lastKey) options.onChange?.(run);
      lastKey = changeKey(run);
      if (isTerminal(run.state)) return run;
      await sleep(interval);
    }
  } finally {
    bar?.stop();
    process.removeListener('SIGINT', stopOnSignal);
  }
}

/**
 * What Ctrl-C during a watch says: only the watch stopped; the run is carried by the workers and
 * goes on, with the commands to follow it again or to cancel it.
 */
export function interruptedLines(
  sourceId: string,
  runId: string,
  hint: (args: string) => string = (args) => `harvester ${args}`,
): string[] {
  return [
    `stopped watching; run ${runId} goes on (workers carry it, not this terminal)`,
    `  follow it again: ${hint(`runs watch ${sourceId} ${runId}`)}`,
    `  cancel it:       ${hint(`runs cancel ${sourceId} ${runId}`)}`,
  ];
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The closing line of a watch, and whether the run ended well — the words and the exit code
 * agree. A run ends well when it succeeded; a retry-failed run only when nothing it retried still
 * fails (a script running `dlq retry --watch && next` must not go on with dead letters left), and
 * then its line says "finished … but N still fail" rather than "succeeded". A retry that fixed
 * nothing ended failed (`retry_fixed_nothing`), and says so. The figures are the run's outcome,
 * fixed when it ended, in its summary.
 */
export function outcomeOf(run: RunView): { line: string; ok: boolean } {
  const failure = run.failure ? ` (${run.failure.reason}: ${run.failure.message})` : '';
  const duration = run.durationSeconds === null ? '' : ` in ${humanDuration(run.durationSeconds)}`;
  const stillFailing = run.mode === 'dlq_retry' && run.state === 'succeeded' ? run.errorCount : 0;
  if (stillFailing > 0)
    return {
      line: `run ${run.runId} finished${duration} but ${stillFailing} dead ${stillFailing === 1 ? 'letter still fails' : 'letters still fail'}: ${run.summary}`,
      ok: false,
    };
  return {
    line: `run ${run.runId} ${run.state}${duration}: ${run.summary}${failure}`,
    ok: run.state === 'succeeded',
  };
}

/** A run's path under its source: the one route of it a source owner's IAM policy covers. */
export function runPath(sourceId: string, runId: string): string {
  return `/sources/${encodeURIComponent(sourceId)}/runs/${encodeURIComponent(runId)}`;
}
