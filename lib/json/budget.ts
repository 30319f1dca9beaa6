import { endOfString } from './lossless.js';

/**
 * A memory cap, not only a byte cap. A body's bytes say little about what it costs once parsed: a
 * 16 MiB body of empty arrays (`[[],[],…]`, 5.6 million values) takes some 229 MB of heap as
 * objects, at the 32 MiB byte ceiling twice that — past the page worker's 512 MB and the API
 * function's 256 MB. A body nested thousands deep parses, then overflows the stack of whatever
 * walks it next (serializing a sample, scrubbing a record). So before a body is parsed, one pass
 * over its text — allocating nothing — counts its values, measures its depth and estimates the
 * heap the parsed value would take; a body over any of the three is refused unparsed.
 *
 * The estimate is V8's cost, rounded up (measured with `--expose-gc`, see docs/limits.md): 64 bytes
 * for an array or object (an empty object's header and slack; an array's is 40), 16 for any
 * other value (a pointer and, for a non-small number, its box), and per character of a string 1
 * byte, or 2 when the text holds a character past Latin-1 (V8 then keeps its strings two-byte).
 */

/** The ceilings of one parsed body; see the module documentation for why each value. */
export const PARSE_BUDGET = {
  /**
   * Values (arrays, objects, strings, numbers, literals, object keys). A page of 100 GitHub issues
   * holds some 20,000; 1,000,000 leaves room for 10,000 records of 100 fields.
   */
  values: 1_000_000,
  /**
   * Nesting depth. Three times what the store keeps (DynamoDB nests 32 levels), so a record too
   * deep to store is dead-lettered alone while its page is stored; shallow enough that every walk
   * over a record (scrubbing, serializing) stays far inside the stack.
   */
  depth: 100,
  /**
   * Estimated heap of the parsed value. 64 MiB: with the body's bytes and text (at the 16 MiB
   * default, up to 48 MiB), a check inside the API's 256 MB and a page inside the worker's 512 MB.
   */
  heapBytes: 64 * 1_024 * 1_024,
} as const;

/** The ceilings a body is measured against (default {@link PARSE_BUDGET}). */
export interface ParseBudget {
  readonly values: number;
  readonly depth: number;
  readonly heapBytes: number;
}

/** Bytes of heap estimated per value; see the module documentation. */
const COST = { container: 64, scalar: 16 } as const;

// biome-ignore lint/suspicious/noControlCharactersInRegex: the whole Latin-1 range is the point.
const PAST_LATIN1 = /[^\u0000-\u00ff]/;

/** Which ceiling a body went over, and how far the measure got when it did. */
export interface ParseBudgetExcess {
  readonly ceiling: keyof ParseBudget;
  readonly limit: number;
  /** What was measured when the ceiling was passed (the scan stops there). */
  readonly measured: number;
}

/** A body refused unparsed, by {@link checkParseBudget}. */
export class ParseBudgetError extends Error {
  override readonly name = 'ParseBudgetError';

  constructor(readonly excess: ParseBudgetExcess) {
    super(budgetMessage(excess));
  }
}

function budgetMessage({ ceiling, limit, measured }: ParseBudgetExcess): string {
  if (ceiling === 'depth') return `nests deeper than ${limit} levels`;
  if (ceiling === 'values') return `holds more than ${limit} values`;
  return `would take more than ${Math.round(limit / 1_048_576)} MiB of memory once parsed (estimated ${Math.round(measured / 1_048_576)} MiB so far)`;
}

/** True for the characters a number or a literal (`true`, `false`, `null`) is made of. */
function isBareChar(code: number): boolean {
  return (
    (code >= 48 && code <= 57) ||
    (code >= 97 && code <= 122) ||
    code === 43 ||
    code === 45 ||
    code === 46 ||
    code === 69
  );
}

/**
 * What is wrong with parsing `text` under `budget`, or undefined when it fits. One pass over the
 * text, stopping at the first ceiling passed; syntax is left to the parser (a malformed body is
 * measured as far as it looks like JSON).
 *
 * @example
 * parseBudgetExcess('[[[1]]]', { ...PARSE_BUDGET, depth: 2 }); // { ceiling: 'depth', limit: 2, measured: 3 }
 */
export function parseBudgetExcess(
  text: string,
  budget: ParseBudget = PARSE_BUDGET,
): ParseBudgetExcess | undefined {
  let depth = 0;
  let values = 0;
  let heap = 0;
  const char = PAST_LATIN1.test(text) ? 2 : 1;
  for (let i = 0; i < text.length; ) {
    const code = text.charCodeAt(i);
    if (code === 34) {
      const end = endOfString(text, i);
      values += 1;
      heap += COST.scalar + char * (end - i - 2);
      i = end;
    } else if (code === 91 || code === 123) {
      depth += 1;
      values += 1;
      heap += COST.container;
      if (depth > budget.depth) return { ceiling: 'depth', limit: budget.depth, measured: depth };
      i += 1;
    } else if (code === 93 || code === 125) {
      depth -= 1;
      i += 1;
    } else if (isBareChar(code)) {
      values += 1;
      heap += COST.scalar;
      while (i < text.length && isBareChar(text.charCodeAt(i))) i += 1;
    } else {
      i += 1;
      continue;
    }
    if (values > budget.values) return { ceiling: 'values', limit: budget.values, measured: values };
    if (heap > budget.heapBytes) return { ceiling: 'heapBytes', limit: budget.heapBytes, measured: heap };
  }
  return undefined;
}

/**
 * Throws when `text` would go over `budget` once parsed; see {@link parseBudgetExcess}.
 *
 * @throws ParseBudgetError naming the ceiling passed.
 */
export function checkParseBudget(text: string, budget: ParseBudget = PARSE_BUDGET): void {
  const excess = parseBudgetExcess(text, budget);
  if (excess) throw new ParseBudgetError(excess);
}
