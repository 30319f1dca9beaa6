import { describe, expect, it } from 'vitest';
import { parseConnectorConfig } from '../../lib/connectors/registry.js';
import { atPrecision, LOOKBACK_CEILING_SECONDS } from '../../lib/connectors/source-timing.js';

describe('per-source timing settings', () => {
  it.each(['github-issues', 'gitlab-issues', 'rest-json'])(
    '%s accepts a lookback up to the ceiling and refuses one above it',
    (connector) => {
      const base =
        connector === 'github-issues'
          ? { owner: 'o', repo: 'r' }
          : connector === 'gitlab-issues'
            ? { project: 'g/p' }
            : {
                url: 'https://api.example.com/r',
                idField: 'id',
                updatedAtField: 'u',
                pagination: { type: 'page' },
              };
      expect(() =>
        parseConnectorConfig(connector, { ...base, watermarkLookbackSeconds: LOOKBACK_CEILING_SECONDS }),
      ).not.toThrow();
      expect(() =>
        parseConnectorConfig(connector, { ...base, watermarkLookbackSeconds: LOOKBACK_CEILING_SECONDS + 1 }),
      ).toThrow(/watermarkLookbackSeconds/);
    },
  );

  it('cuts a time to whole seconds for a second-precision filter, and leaves it at millisecond precision', () => {
    expect(atPrecision('2024-05-01T10:00:00.999Z', 's')).toBe('2024-05-01T10:00:00.000Z');
    expect(atPrecision('2024-05-01T10:00:00.999Z', 'ms')).toBe('2024-05-01T10:00:00.999Z');
    expect(atPrecision('2024-05-01T10:00:00.999Z', undefined)).toBe('2024-05-01T10:00:00.999Z');
  });
});
