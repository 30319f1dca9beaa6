/**
 * The CLI's start-up time as a user meets it: the invocation the README documents (`harvester`,
 * which is bin/harvester on the PATH), run with `--help` ten times after one warm-up; the median
 * is `cliStartMs`. The bundle is rebuilt first, as `npm ci` leaves it, so the bin takes its
 * bundled path and not the TypeScript fallback an edited checkout gets.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type GoalRow, show } from './report.js';
import { round } from './setup.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/harvester', import.meta.url));
const RUNS = 10;

/** The measured start-up times of one phase. */
export interface CliStartResult {
  readonly invocation: string;
  readonly runs: number;
  /** Median wall time of one `harvester --help`, process start to exit. */
  readonly cliStartMs: number;
  readonly samplesMs: readonly number[];
}

/** Times `harvester --help` (see the file comment). */
export function runCliStart(): CliStartResult {
  execFileSync(process.execPath, ['scripts/build-cli.mjs'], { cwd: ROOT, stdio: 'inherit' });
  const once = (): number => {
    const started = performance.now();
    const out = execFileSync(BIN, ['--help'], { cwd: ROOT, encoding: 'utf8', env: cliEnv() });
    if (!out.includes('Usage: harvester')) throw new Error(`unexpected --help output: ${out.slice(0, 200)}`);
    return performance.now() - started;
  };
  once(); // warm-up: file system cache
  const samples = Array.from({ length: RUNS }, once);
  const sorted = [...samples].sort((a, b) => a - b);
  const median = (sorted[RUNS / 2 - 1]! + sorted[RUNS / 2]!) / 2;
  return {
    invocation: 'harvester --help (bin/harvester on the PATH, see README)',
    runs: RUNS,
    cliStartMs: round(median, 0),
    samplesMs: samples.map((ms) => round(ms, 0)),
  };
}

/** The user's environment, minus what would change the bin's path (a forced source run). */
function cliEnv(): NodeJS.ProcessEnv {
  const { HARVESTER_NO_BUNDLE: _ignored, ...env } = process.env;
  return env;
}

/** The goal row: a CLI call through the README's invocation starts in at most half a second. */
export const CLI_START_GOAL = 'CLI start (README invocation, median of 10)';

/** `cliStartMs` judged against its target; `met` is null when the phase did not run. */
export function cliStartGoal(result: CliStartResult | null): GoalRow {
  return {
    goal: CLI_START_GOAL,
    target: '≤ 500 ms',
    measured: show(result?.cliStartMs, ' ms', 0),
    met: result ? result.cliStartMs <= 500 : null,
    note: 'harvester --help from the bundled CLI, process start to exit',
  };
}
