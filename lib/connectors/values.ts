/**
 * Small value helpers shared by connectors: reading a dot path out of a JSON document and turning
 * a source's timestamp into the one version format the store compares as a string.
 */

/**
 * The value at a dot path (`data.items`, `meta.page.next`, `results.0.id`); `''` is the value
 * itself. Array elements are addressed by index. Only own properties are read, so a path like
 * `constructor` finds nothing instead of a prototype function. Keys containing dots are not
 * addressable (a deliberate limit: no source we know of needs them).
 *
 * @example
 * getPath({ data: { items: [1, 2] } }, 'data.items'); // [1, 2]
 */
export function getPath(value: unknown, path: string): unknown {
  if (path === '') return value;
  let current: unknown = value;
  for (const segment of path.split('.')) {
    if (Array.isArray(current) && /^\d+$/.test(segment)) {
      current = current[Number(segment)];
    } else if (typeof current === 'object' && current !== null && Object.hasOwn(current, segment)) {
      current = (current as Record<string, unknown>)[segment];
    } else {
      return undefined;
    }
  }
  return current;
}

/** A value is a plain JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Years 0000–9999 only: toISOString writes other years as `+010000-…`, which would break the
// string ordering every version comparison relies on.
const MIN_MS = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z (Date.UTC reads year 0 as 1900)
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

// Epoch numbers below this are seconds: 1e11 s is the year 5138, 1e11 ms is March 1973, so the
// two readings never overlap for plausible modification times.
const EPOCH_SECONDS_BELOW = 1e11;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/i;
const HAS_ZONE = /(Z|[+-]\d{2}(:?\d{2})?)$/i;
const HAS_TIME = /[T ]\d{2}:\d{2}/;
const RFC_2822 = /^([A-Za-z]{3}, )?\d{1,2} [A-Za-z]{3} \d{4} \d{2}:\d{2}(:\d{2})? (GMT|UTC|[+-]\d{4})$/;
const EPOCH = /^\d+(\.\d+)?$/;

function fromMs(ms: number): string | undefined {
  if (!Number.isFinite(ms) || ms < MIN_MS || ms > MAX_MS) return undefined;
  return new Date(ms).toISOString();
}

function fromString(text: string): string | undefined {
  const value = text.trim();
  if (EPOCH.test(value)) return fromNumber(Number(value));
  if (ISO_DATE.test(value)) {
    // A date-time without a zone is read as UTC, not as the host's local time: the same record
    // must get the same version on a laptop and in Lambda.
    const zoned = HAS_TIME.test(value) && !HAS_ZONE.test(value) ? `${value.replace(' ', 'T')}Z` : value;
    return fromMs(Date.parse(zoned.replace(' ', 'T')));
  }
  if (RFC_2822.test(value)) return fromMs(Date.parse(value));
  return undefined;
}

function fromNumber(n: number): string | undefined {
  return fromMs(Math.abs(n) < EPOCH_SECONDS_BELOW ? n * 1_000 : n);
}

/**
 * A source timestamp as ISO 8601 UTC with milliseconds (`2024-05-01T12:00:00.000Z`), the version
 * format whose string order is time order. Accepts ISO 8601 strings (zone-less ones as UTC),
 * RFC 2822 / HTTP dates, and epoch seconds or milliseconds (numbers or digit strings). Anything
 * else, including dates outside the years 0–9999, is `undefined`.
 *
 * @example
 * toIsoTimestamp('2024-05-01T14:00:00+02:00'); // '2024-05-01T12:00:00.000Z'
 * toIsoTimestamp(1714564800); // '2024-05-01T12:00:00.000Z'
 */
export function toIsoTimestamp(value: unknown): string | undefined {
  if (typeof value === 'number') return fromNumber(value);
  if (typeof value === 'string') return fromString(value);
  return undefined;
}
