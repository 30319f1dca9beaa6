import { describe, expect, it } from 'vitest';
import { lineCount, MAX_LINES, overLong } from '../../scripts/check-file-size.js';

/* The file-size rule `npm run lint` enforces on lib/ (scripts/check-file-size.ts). */

describe('the file-size check', () => {
  it('counts lines, a final newline not being a line of its own', () => {
    expect(lineCount('')).toBe(0);
    expect(lineCount('a')).toBe(1);
    expect(lineCount('a\nb\n')).toBe(2);
    expect(lineCount('a\n\nb')).toBe(3);
  });

  it(`names the files over ${MAX_LINES} lines, and only those`, () => {
    const text = (lines: number) => 'x;\n'.repeat(lines);
    const files = [
      { path: 'lib/a.ts', text: text(MAX_LINES) },
      { path: 'lib/b.ts', text: text(MAX_LINES + 1) },
    ];

    expect(overLong(files)).toEqual([{ path: 'lib/b.ts', lines: MAX_LINES + 1 }]);
  });
});
