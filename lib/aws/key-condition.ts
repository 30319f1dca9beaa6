import type { Image } from './stale-history.js';

type Request = Record<string, unknown>;
type Test = (image: Image) => boolean;

/** Compares two wire values of one key type (S, N or B), or undefined when they are of none. */
function compare(a: unknown, b: unknown): number | undefined {
  const x = a as { S?: string; N?: string } | undefined;
  const y = b as { S?: string; N?: string } | undefined;
  if (x?.N !== undefined && y?.N !== undefined) return Number(x.N) - Number(y.N);
  if (x?.S !== undefined && y?.S !== undefined) return Buffer.compare(Buffer.from(x.S), Buffer.from(y.S));
  return undefined;
}

const OPERATORS: Record<string, (order: number) => boolean> = {
  '=': (o) => o === 0,
  '<': (o) => o < 0,
  '<=': (o) => o <= 0,
  '>': (o) => o > 0,
  '>=': (o) => o >= 0,
};

/**
 * The test a query's `KeyConditionExpression` puts on an item in the wire format, or null when the
 * expression is not one this small reader knows (`=`, `<`, `<=`, `>`, `>=`, `BETWEEN`,
 * `begins_with`, joined by AND — every key condition DynamoDB accepts). A lagging query uses it to
 * answer with an item's earlier state that the query's range held then but no longer holds.
 */
export function keyConditionTest(input: Request): Test | null {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  const name = (token: string) => names[token] ?? token;
  let rest = (input.KeyConditionExpression as string | undefined) ?? '';
  const tests: Test[] = [];
  const take = (pattern: RegExp, build: (m: RegExpMatchArray) => Test) => {
    rest = rest.replace(pattern, (...match) => {
      tests.push(build(match as unknown as RegExpMatchArray));
      return ' ';
    });
  };
  take(/begins_with\s*\(\s*([#\w]+)\s*,\s*(:\w+)\s*\)/g, (m) => (image) => {
    const [value, prefix] = [image[name(m[1]!)] as { S?: string }, values[m[2]!] as { S?: string }];
    return value?.S !== undefined && prefix?.S !== undefined && value.S.startsWith(prefix.S);
  });
  take(/([#\w]+)\s+BETWEEN\s+(:\w+)\s+AND\s+(:\w+)/gi, (m) => (image) => {
    const value = image[name(m[1]!)];
    const [low, high] = [compare(value, values[m[2]!]), compare(value, values[m[3]!])];
    return low !== undefined && high !== undefined && low >= 0 && high <= 0;
  });
  take(/([#\w]+)\s*(<=|>=|=|<|>)\s*(:\w+)/g, (m) => (image) => {
    const order = compare(image[name(m[1]!)], values[m[3]!]);
    return order !== undefined && OPERATORS[m[2]!]!(order);
  });
  if (tests.length === 0 || rest.replace(/\bAND\b|[()\s]/gi, '') !== '') return null;
  return (image) => tests.every((test) => test(image));
}
