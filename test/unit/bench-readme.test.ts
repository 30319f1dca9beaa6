import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  BEGIN,
  type BenchResults,
  benchmarkTables,
  DOC,
  END,
  RESULTS_JSON,
  withTables,
} from '../../bench/readme.js';

describe('benchmark tables in docs/benchmark.md', () => {
  it('are the ones bench/results.json generates (regenerate: npx tsx bench/readme.ts)', () => {
    const doc = readFileSync(DOC, 'utf8');
    const results = JSON.parse(readFileSync(RESULTS_JSON, 'utf8')) as BenchResults;
    const block = doc.slice(doc.indexOf(BEGIN) + BEGIN.length, doc.indexOf(END)).trim();
    expect(block).toBe(benchmarkTables(results));
  });

  it('replaces only what lies between the markers', () => {
    const results = JSON.parse(readFileSync(RESULTS_JSON, 'utf8')) as BenchResults;
    const doc = `before\n${BEGIN}\nold table\n${END}\nafter\n`;
    const written = withTables(doc, results);
    expect(written.startsWith(`before\n${BEGIN}\n`)).toBe(true);
    expect(written.endsWith(`${END}\nafter\n`)).toBe(true);
    expect(written).not.toContain('old table');
    expect(() => withTables('no markers', results)).toThrow(/markers/);
  });
});
