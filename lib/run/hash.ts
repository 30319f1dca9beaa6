import { createHash } from 'node:crypto';

/** Canonical JSON: object keys sorted at every level, so equal values always hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** A short stable hash of any JSON value (sha256, hex, 32 chars). */
export function stableHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex').slice(0, 32);
}

/**
 * The hash a run records of what produced its checkpoint: mode, connector, the
 * connector config and the run's scope. A resume compares it with the source's current value.
 */
export function runParamsHash(input: {
  mode: string;
  connector: string;
  config: Record<string, unknown>;
  scope?: unknown;
}): string {
  return stableHash({
    mode: input.mode,
    connector: input.connector,
    config: input.config,
    scope: input.scope ?? null,
  });
}
