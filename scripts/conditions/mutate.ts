/**
 * Condition mutants: each way a DynamoDB condition expression can be weakened by one edit. Pure
 * text in, text out, so it works on any fragment of a condition — a whole `ConditionExpression`,
 * a shared clause (`RUN_CONDITIONS.runningAtEpoch`) or the literal part of a template (` AND
 * epoch = :epoch`). See docs/testing.md ("Condition mutants").
 */
import { TABLES, type TableDefinition } from '../../lib/resources/definitions.js';

/** One weakened version of a condition fragment. */
export interface Mutant {
  /** What changed, e.g. "drop `#version < :version`" or "`<` → `<=`". */
  readonly description: string;
  /** The whole fragment after the edit. */
  readonly text: string;
  /** Set when the mutant means the same as the original on the emulator: why (it is not run). */
  readonly equivalent?: string;
}

/**
 * moto evaluates a comparison with a missing attribute as unequal to any value, so on the
 * emulator `attribute_not_exists(x) OR x <> :v` means the same as `x <> :v`. The explicit clause
 * stays: it says what a row without the attribute gets, without relying on how a missing attribute
 * compares. See docs/testing.md.
 */
const MISSING_IS_UNEQUAL = 'a missing attribute already compares unequal (`<>`) on the emulator';

/**
 * A condition is judged against an empty item when the item does not exist, and a comparison
 * (`=`, `<`, `>=`, `IN`, …, not `<>`) with a missing attribute is false: so `attribute_exists(k)`
 * of a table's key `k` beside such a comparison in an AND adds nothing the comparison does not
 * already refuse. The clause stays: it says that the write never creates the item.
 */
const ITEM_MISSING =
  "a missing item has no attribute to compare: the AND's comparison already refuses it (the clause says the write never creates the item)";

/** The key attributes of the tables: `attribute_exists` of one of them is true for every item that exists. */
const TABLE_KEYS: ReadonlySet<string> = new Set(
  Object.values(TABLES).flatMap((table: TableDefinition) => [
    table.partitionKey.name,
    ...(table.sortKey ? [table.sortKey.name] : []),
  ]),
);

/** A comparison that is false on a missing attribute: `x = :v`, `x >= :v`, `x IN (…)`, not `x <> :v`. */
function falseWhenMissing(clause: string): boolean {
  if (/^[#\w.[\]]+\s+IN\s*\(/.test(clause)) return true;
  const match = /^[#\w.[\]]+\s*(<>|<=|>=|<|>|=)\s*:\w+$/.exec(clause);
  return match !== null && match[1] !== '<>';
}

/** Dropping `attribute_exists(key)` from an AND that also compares an attribute: see {@link ITEM_MISSING}. */
function keyExistenceBesideComparison(
  clause: string,
  chain: 'AND' | 'OR',
  siblings: readonly string[],
): boolean {
  const key = /^attribute_exists\(\s*(\w+)\s*\)$/.exec(clause)?.[1];
  return chain === 'AND' && key !== undefined && TABLE_KEYS.has(key) && siblings.some(falseWhenMissing);
}

const COMPARATOR_SWAPS: Readonly<Record<string, readonly string[]>> = {
  '<': ['<=', '<>'],
  '<=': ['<', '<>'],
  '>': ['>=', '<>'],
  '>=': ['>', '<>'],
  '=': ['<>'],
  '<>': ['='],
};

/** Every mutant of `fragment`: dropped clauses, swapped comparators, flipped existence, shortened IN lists. */
export function mutantsOf(fragment: string): Mutant[] {
  return [
    ...clauseDrops(fragment),
    ...comparatorSwaps(fragment),
    ...existenceFlips(fragment),
    ...inDrops(fragment),
  ];
}

/**
 * A clause is dropped by making it constant rather than deleting it: DynamoDB refuses a request
 * whose attribute names or values go unused, so a deleted clause would fail every write and
 * "kill" its mutant for the wrong reason. `always` is the clause dropped from an AND chain,
 * `never` the clause dropped from an OR chain.
 */
export function always(clause: string, path: string): string {
  return `(${clause} OR attribute_exists(${path}) OR attribute_not_exists(${path}))`;
}

export function never(clause: string, path: string): string {
  return `(${clause} AND attribute_exists(${path}) AND attribute_not_exists(${path}))`;
}

/** The first attribute path a clause reads, to build its constant form; null when it reads none. */
export function pathOf(clause: string): string | null {
  const exists = /attribute_(?:not_)?exists\(\s*([^)\s]+)\s*\)/.exec(clause);
  if (exists?.[1]) return exists[1];
  for (const match of clause.matchAll(/[#A-Za-z_][\w.#[\]]*/g)) {
    const token = match[0];
    const next = clause.slice(match.index + token.length).trimStart();
    if (/^(AND|OR|NOT|IN|BETWEEN)$/i.test(token) || next.startsWith('(')) continue;
    if (clause[match.index - 1] === ':') continue;
    return token;
  }
  return null;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

interface Range {
  readonly start: number;
  readonly end: number;
}

function clauseDrops(fragment: string): Mutant[] {
  if (!balanced(fragment)) return [];
  const mutants: Mutant[] = [];
  const visit = (range: Range): void => {
    const ors = split(fragment, range, 'OR');
    const chain = ors.connectors > 0 ? 'OR' : 'AND';
    const { pieces } = chain === 'OR' ? ors : split(fragment, range, 'AND');
    for (const piece of pieces) {
      const clause = fragment.slice(piece.start, piece.end);
      const path = pathOf(clause);
      if (path !== null) {
        const constant = chain === 'AND' ? always(clause, path) : never(clause, path);
        const siblings = pieces
          .filter((other) => other !== piece)
          .map((other) => fragment.slice(other.start, other.end));
        const unequal = new RegExp(`^${escapeRegExp(path)}\\s*<>\\s*:\\w+$`);
        const missingIsUnequal =
          chain === 'OR' &&
          clause === `attribute_not_exists(${path})` &&
          siblings.some((other) => unequal.test(other));
        const equivalent = missingIsUnequal
          ? MISSING_IS_UNEQUAL
          : keyExistenceBesideComparison(clause, chain, siblings)
            ? ITEM_MISSING
            : undefined;
        mutants.push({
          description: `drop \`${clause}\``,
          text: fragment.slice(0, piece.start) + constant + fragment.slice(piece.end),
          ...(equivalent ? { equivalent } : {}),
        });
      }
      if (chain === 'OR' && split(fragment, piece, 'AND').connectors > 0) visit(piece);
      else if (isGroup(fragment, piece)) visit({ start: piece.start + 1, end: piece.end - 1 });
    }
  };
  visit({ start: 0, end: fragment.length });
  return mutants;
}

/**
 * The non-empty clauses of `range` between top-level `keyword`s, trimmed, and how many keywords
 * there are: a fragment may start or end with one (` AND epoch = :epoch`), which says what chain
 * its single clause belongs to.
 */
function split(text: string, range: Range, keyword: 'AND' | 'OR'): { pieces: Range[]; connectors: number } {
  const pieces: Range[] = [];
  let connectors = 0;
  let depth = 0;
  let from = range.start;
  const pattern = new RegExp(`\\s${keyword}\\s`, 'y');
  for (let i = range.start; i < range.end; i++) {
    const char = text[i];
    if (char === '(') depth++;
    else if (char === ')') depth--;
    pattern.lastIndex = i;
    if (depth === 0 && pattern.test(text) && pattern.lastIndex <= range.end) {
      pieces.push({ start: from, end: i });
      connectors++;
      from = pattern.lastIndex;
      i = pattern.lastIndex - 1;
    }
  }
  pieces.push({ start: from, end: range.end });
  return { pieces: pieces.map(trim(text)).filter((piece) => piece.end > piece.start), connectors };
}

const trim =
  (text: string) =>
  (range: Range): Range => {
    let { start, end } = range;
    while (start < end && /\s/.test(text[start] ?? '')) start++;
    while (end > start && /\s/.test(text[end - 1] ?? '')) end--;
    return { start, end };
  };

/** A clause wrapped whole in grouping parentheses (not a function call's or an IN list's). */
function isGroup(text: string, range: Range): boolean {
  if (text[range.start] !== '(' || text[range.end - 1] !== ')') return false;
  let depth = 0;
  for (let i = range.start; i < range.end - 1; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    if (depth === 0) return false;
  }
  return true;
}

function balanced(text: string): boolean {
  let depth = 0;
  for (const char of text) {
    if (char === '(') depth++;
    else if (char === ')' && --depth < 0) return false;
  }
  return depth === 0;
}

function comparatorSwaps(fragment: string): Mutant[] {
  const mutants: Mutant[] = [];
  for (const match of fragment.matchAll(/<>|<=|>=|<|>|=/g)) {
    for (const swap of COMPARATOR_SWAPS[match[0]] ?? []) {
      mutants.push({
        description: `\`${match[0]}\` → \`${swap}\` in \`${around(fragment, match.index)}\``,
        text: fragment.slice(0, match.index) + swap + fragment.slice(match.index + match[0].length),
      });
    }
  }
  return mutants;
}

function existenceFlips(fragment: string): Mutant[] {
  return [...fragment.matchAll(/attribute_(not_)?exists\(([^)]*)\)/g)].map((match) => {
    const flipped = `attribute_${match[1] ? '' : 'not_'}exists(${match[2]})`;
    return {
      description: `\`${match[0]}\` → \`${flipped}\``,
      text: fragment.slice(0, match.index) + flipped + fragment.slice(match.index + match[0].length),
    };
  });
}

/** `x IN (:a, :b)` loses one value (kept in a clause that never holds, so it stays used). */
function inDrops(fragment: string): Mutant[] {
  const mutants: Mutant[] = [];
  for (const match of fragment.matchAll(/([#\w.]+)\s+IN\s+\(([^)]*)\)/g)) {
    const [whole, path = '', list = ''] = match;
    const values = list.split(',').map((value) => value.trim());
    if (values.length < 2) continue;
    for (const value of values) {
      const rest = values.filter((other) => other !== value).join(', ');
      const edited = `(${path} IN (${rest}) OR ${never(`${path} = ${value}`, path)})`;
      mutants.push({
        description: `drop \`${value}\` from \`${whole}\``,
        text: fragment.slice(0, match.index) + edited + fragment.slice(match.index + whole.length),
      });
    }
  }
  return mutants;
}

/** The clause around `index`, for a readable description. */
function around(text: string, index: number): string {
  const before =
    text
      .slice(0, index)
      .split(/\s(?:AND|OR)\s|\(/)
      .pop() ?? '';
  const after = text.slice(index).split(/\s(?:AND|OR)\s|\)/)[0] ?? '';
  return `${before}${after}`.trim();
}
