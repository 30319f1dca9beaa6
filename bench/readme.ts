import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { GoalRow } from './report.js';

/**
 * The tables of docs/benchmark.md, generated from bench/results.json so the published numbers are
 * always the ones one benchmark run measured. `npm run bench` rewrites them after a full run;
 * `npx tsx bench/readme.ts` rewrites them from the results.json on disk.
 */

export const DOC = fileURLToPath(new URL('../docs/benchmark.md', import.meta.url));
export const RESULTS_JSON = fileURLToPath(new URL('./results.json', import.meta.url));
export const BEGIN = '<!-- bench:tables:begin (generated from bench/results.json by bench/readme.ts) -->';
export const END = '<!-- bench:tables:end -->';

interface Billed {
  readonly measuredAt: string;
  readonly entities: number;
  readonly pages: number;
  readonly meanItemBytes?: number;
  readonly requestsPerPage: {
    readonly itemWrites: number;
    readonly itemReads?: number;
    readonly controlPlane: number;
    readonly byOperation: Record<string, number>;
    readonly unitsByOperation: Record<string, number>;
  };
  readonly cost: { readonly totalUsd: number };
}

/** The parts of results.json the tables show. */
export interface BenchResults {
  readonly generatedAt: string;
  readonly environment: Record<string, unknown>;
  readonly pipeline: { readonly measuredAt?: string } | null;
  readonly requestsPerPage: Billed['requestsPerPage'] | null;
  readonly costPerMillionEntitiesUsd: number | null;
  readonly costBreakdown?: { readonly measuredOnEmulator?: { readonly totalUsd: number } | null };
  readonly unchangedReread: Billed | null;
  readonly reconciliationUnchanged: Billed | null;
  readonly entities2Kb: Billed | null;
  readonly goals: readonly GoalRow[];
}

/** A markdown table with aligned columns, as the repository's formatter writes it. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

const cell = (value: number | null | undefined, digits = 2) =>
  value === null || value === undefined ? 'n/a' : value.toFixed(digits);

/** Write units per page of a run: every DynamoDB write operation's billed units. */
function units(perPage: Billed['requestsPerPage'] | null | undefined, kind: 'write' | 'read'): number | null {
  if (!perPage) return null;
  const pattern =
    kind === 'write'
      ? /^DynamoDB\.(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems)/
      : /^DynamoDB\.(GetItem|Query|Scan|BatchGetItem|TransactGetItems)/;
  return Object.entries(perPage.unitsByOperation)
    .filter(([op]) => pattern.test(op))
    .reduce((sum, [, n]) => sum + n, 0);
}

/** The markdown tables for `results`. */
export function benchmarkTables(results: BenchResults): string {
  const first: Billed | null =
    results.requestsPerPage && results.costPerMillionEntitiesUsd !== null
      ? {
          measuredAt: results.pipeline?.measuredAt ?? results.generatedAt,
          entities: 0,
          pages: 0,
          requestsPerPage: results.requestsPerPage,
          cost: { totalUsd: results.costPerMillionEntitiesUsd },
        }
      : null;
  const runs: [string, Billed | null][] = [
    ['first load, ≤ 1 KB entities (`costPerMillionEntitiesUsd`)', first],
    ['second `full` run, unchanged (`costPerMillionUnchangedRereadUsd`)', results.unchangedReread],
    [
      'reconciliation, unchanged (`costPerMillionReconciliationUnchangedUsd`)',
      results.reconciliationUnchanged,
    ],
    ['first load, ~2 KB entities (`costPerMillionEntities2KbUsd`)', results.entities2Kb],
  ];
  const lines: string[] = [];
  lines.push(
    `Generated from \`bench/results.json\` of ${results.generatedAt} (Node ${String(results.environment.node)}, ` +
      `${String(results.environment.cpus)} CPUs, ${String(results.environment.emulator)}).`,
    '',
    ...markdownTable(
      ['goal', 'target', 'measured', 'met'],
      results.goals.map((g) => [
        g.goal,
        g.target,
        g.measured,
        g.met === null ? 'not run' : g.met ? 'yes' : 'no',
      ]),
    ),
    '',
    'Billed cost per million entities, by run (5,000 entities of 100 per page; the ~2 KB line its own source):',
    '',
    ...markdownTable(
      [
        'run',
        'item writes / page',
        'item reads / page',
        'control plane / page',
        'WRU / page',
        'RRU / page',
        'USD per million',
        'measured at',
      ],
      runs.map(([name, run]) => {
        const p = run?.requestsPerPage;
        return [
          name,
          cell(p?.itemWrites),
          cell(p?.itemReads),
          cell(p?.controlPlane),
          cell(units(p, 'write')),
          cell(units(p, 'read')),
          cell(run?.cost.totalUsd, 4),
          run?.measuredAt ?? 'n/a',
        ];
      }),
    ),
    '',
    'Requests per page, by operation:',
    '',
  );
  const ops = [
    ...new Set(runs.flatMap(([, run]) => Object.keys(run?.requestsPerPage.byOperation ?? {}))),
  ].sort();
  lines.push(
    ...markdownTable(
      ['operation', ...runs.map(([name]) => name.replace(/ \(`.*`\)$/, ''))],
      ops.map((op) => [`\`${op}\``, ...runs.map(([, run]) => cell(run?.requestsPerPage.byOperation[op], 3))]),
    ),
  );
  return lines.join('\n');
}

/** `doc` with the text between the markers replaced by the tables of `results`. */
export function withTables(doc: string, results: BenchResults): string {
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin === -1 || end < begin) throw new Error(`docs/benchmark.md lacks the markers ${BEGIN} … ${END}`);
  return `${doc.slice(0, begin + BEGIN.length)}\n\n${benchmarkTables(results)}\n\n${doc.slice(end)}`;
}

/** Rewrites the tables of docs/benchmark.md from `results`. */
export function writeBenchmarkDocs(results: unknown): void {
  writeFileSync(DOC, withTables(readFileSync(DOC, 'utf8'), results as BenchResults));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  writeBenchmarkDocs(JSON.parse(readFileSync(RESULTS_JSON, 'utf8')));
