import { round } from './setup.js';

/** One goal next to what was measured. */
export interface GoalRow {
  readonly goal: string;
  readonly target: string;
  readonly measured: string;
  /** null when the phase did not run (BENCH_QUICK, BENCH_ONLY). */
  readonly met: boolean | null;
  readonly note?: string;
}

/** Formats a number or reports it missing. */
export function show(value: number | null | undefined, unit = '', digits = 2): string {
  return value === null || value === undefined ? 'n/a' : `${round(value, digits)}${unit}`;
}

/** Prints rows as an aligned text table. */
export function printTable(
  title: string,
  header: readonly string[],
  rows: readonly (readonly string[])[],
): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
}

/** Prints the goal rows. */
export function printGoals(goals: readonly GoalRow[]): void {
  printTable(
    'Goals',
    ['goal', 'target', 'measured', 'met'],
    goals.map((g) => [g.goal, g.target, g.measured, g.met === null ? 'not run' : g.met ? 'yes' : 'NO']),
  );
  for (const g of goals) if (g.note) console.log(`  · ${g.goal}: ${g.note}`);
}

/** Prints the per-page request counts. */
export function printRequests(byOperation: Record<string, number>): void {
  printTable(
    'AWS requests per page (pipeline run)',
    ['operation', 'per page'],
    Object.entries(byOperation).map(([op, n]) => [op, show(n, '', 3)]),
  );
}
