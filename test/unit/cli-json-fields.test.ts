import { describe, expect, it } from 'vitest';
import { CliUsageError } from '../../lib/cli/errors.js';
import { selectFields } from '../../lib/cli/output.js';

describe('--json=field,… selection', () => {
  const page = {
    items: [
      { entityId: 'e-1', version: 'v1', data: { big: 1 } },
      { entityId: 'e-2', version: 'v2', data: {}, tombstonedAt: 'then' },
    ],
    nextCursor: 'c2',
    nextChangedSince: null,
  };

  it('keeps a list envelope whole and selects the fields of each item, in the order asked', () => {
    expect(selectFields(page, ['version', 'entityId'])).toEqual({
      items: [
        { version: 'v1', entityId: 'e-1' },
        { version: 'v2', entityId: 'e-2' },
      ],
      nextCursor: 'c2',
      nextChangedSince: null,
    });
    // A field only some items carry is null on the others.
    expect((selectFields(page, ['tombstonedAt']) as typeof page).items).toEqual([
      { tombstonedAt: null },
      { tombstonedAt: 'then' },
    ]);
  });

  it('selects the fields of a single answer', () => {
    expect(selectFields({ runId: 'r', state: 'running', progress: { processed: 3 } }, ['state'])).toEqual({
      state: 'running',
    });
  });

  it('refuses a field the answer does not have, naming those it has', () => {
    expect(() => selectFields(page, ['entityid'])).toThrow(CliUsageError);
    expect(() => selectFields(page, ['entityid'])).toThrow(
      'unknown JSON field `entityid`; the answer has: data, entityId, tombstonedAt, version',
    );
    // An empty list has no fields to check against: nothing to refuse.
    expect(selectFields({ items: [], nextCursor: null }, ['x'])).toEqual({ items: [], nextCursor: null });
  });
});
