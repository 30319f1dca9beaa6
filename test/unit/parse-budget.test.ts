import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PARSE_BUDGET, parseBudgetExcess } from '../../lib/json/budget.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MiB = 1_024 * 1_024;

describe('parseBudgetExcess', () => {
  const small = { values: 10, depth: 3, heapBytes: 1_000 };

  it.each([
    ['a body within every ceiling', '{"a":[1,2,{"b":null}]}', undefined],
    ['brackets inside strings are text, not nesting', '["[[[[", "\\"{{{{"]', undefined],
    ['nesting past the depth', '[[[[1]]]]', 'depth'],
    ['more values than allowed', '[1,2,3,4,5,6,7,8,9,10,11]', 'values'],
    ['a long string past the heap estimate', `["${'x'.repeat(990)}"]`, 'heapBytes'],
  ])('%s', (_name, text, ceiling) => {
    expect(parseBudgetExcess(text, small)?.ceiling).toBe(ceiling);
  });

  it('counts a string past Latin-1 two bytes a character, a Latin-1 one one', () => {
    const budget = { values: 10, depth: 3, heapBytes: 1_000 };
    expect(parseBudgetExcess(`["${'é'.repeat(900)}"]`, budget)).toBeUndefined();
    expect(parseBudgetExcess(`["${'€'.repeat(900)}"]`, budget)?.ceiling).toBe('heapBytes');
  });

  it('lets a page of 100 issues with 60,000-character bodies through', () => {
    const issue = (i: number) => ({
      id: i,
      title: `t${i}`,
      labels: [{ name: 'a' }],
      body: 'x'.repeat(60_000),
    });
    const text = JSON.stringify(Array.from({ length: 100 }, (_, i) => issue(i)));
    expect(parseBudgetExcess(text)).toBeUndefined();
  });

  it('refuses a deep record at the depth ceiling, well before the stack would', () => {
    const deep = `${'['.repeat(PARSE_BUDGET.depth + 1)}${']'.repeat(PARSE_BUDGET.depth + 1)}`;
    expect(parseBudgetExcess(deep)).toEqual({
      ceiling: 'depth',
      limit: PARSE_BUDGET.depth,
      measured: PARSE_BUDGET.depth + 1,
    });
  });
});

/** One page answered through fetchJson in a child process with the collector exposed. */
function measure(shape: string, mib: number) {
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', 'test/support/parse-heap.ts', shape, String(mib)],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 * MiB },
  );
  return JSON.parse(out) as { refused: string | null; retained: number; withGarbage: number; kept: boolean };
}

describe('the parse budget holds the heap, measured', () => {
  it.each([16, 32])(
    'a %i MiB body of empty arrays is refused unparsed, the heap growing by less than 1.5 × the body',
    (mib) => {
      const result = measure('empty-arrays', mib);

      expect(result.refused).toContain('holds more than 1000000 values; refused unparsed');
      // Without the budget it parses: some 230 MB retained at 16 MiB, 460 MB at 32 MiB.
      expect(result.retained).toBeLessThan(8 * MiB);
      // The body's text itself (one byte a character) is all the garbage there is.
      expect(result.withGarbage).toBeLessThan(1.5 * mib * MiB);
    },
    60_000,
  );

  it('a 32 MiB body of real records is parsed, and takes no more heap than the budget says', () => {
    const result = measure('records', 32);

    expect(result.refused).toBeNull();
    expect(result.kept).toBe(true);
    expect(result.retained).toBeLessThan(PARSE_BUDGET.heapBytes);
  }, 60_000);
});
