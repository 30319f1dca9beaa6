/**
 * `tsx scripts/check-file-size.ts` (part of `npm run lint`): fails when a TypeScript file of
 * lib/ is longer than {@link MAX_LINES} lines. A file that long holds more than one concept; it
 * is split by concept, each part named for what it holds (see docs/design.md).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/** The longest a file of lib/ may be. */
export const MAX_LINES = 400;

/**
 * Files known to be over the limit and not yet split, each with the length it may not pass
 * meanwhile; a listed file that fits again is reported so its entry can go.
 */
const KNOWN_LONG: Readonly<Record<string, number>> = {};

const repo = resolve(import.meta.dirname, '..');

/** The .ts files below `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Lines of a file's text, a final newline not counting as a line of its own. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** The files of `files` longer than `max` lines, with their lengths. */
export function overLong(files: readonly { path: string; text: string }[], max = MAX_LINES) {
  return files.map(({ path, text }) => ({ path, lines: lineCount(text) })).filter(({ lines }) => lines > max);
}

function main(): number {
  const files = sourceFiles(join(repo, 'lib')).map((path) => ({
    path: relative(repo, path),
    text: readFileSync(path, 'utf8'),
  }));
  const long = overLong(files);
  const problems = long.filter(({ path, lines }) => lines > (KNOWN_LONG[path] ?? MAX_LINES));
  for (const { path, lines } of problems)
    console.error(`${path}: ${lines} lines, more than ${KNOWN_LONG[path] ?? MAX_LINES}: split it by concept`);
  for (const path of Object.keys(KNOWN_LONG))
    if (!long.some((file) => file.path === path))
      console.log(`note: ${path} fits in ${MAX_LINES} lines now; remove it from KNOWN_LONG`);
  console.log(`file size: ${files.length} files of lib/, ${long.length} over ${MAX_LINES} lines`);
  return problems.length > 0 ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) process.exit(main());
