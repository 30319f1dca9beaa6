import { describe, expect, it } from 'vitest';
import { explanationLines } from '../../lib/cli/commands/items.js';

const DEAD_LETTER = {
  sourceId: 'acme',
  entryId: 'item#e-4',
  kind: 'item',
  ref: 'e-4',
  errorClass: 'permanent',
  reason: 'item too large: 409600 bytes',
  attempts: 1,
  firstFailedAt: '2026-03-01T09:00:00.000Z',
  lastFailedAt: '2026-03-01T09:00:00.000Z',
  runId: '01JRUN',
  page: 1,
  excerpt: null,
} as const;

const STORY = {
  sourceId: 'acme',
  entityId: 'e-4',
  item: null,
  lastListed: null,
  tombstone: null,
  failedPages: [],
  watermark: null,
  deadLetters: [DEAD_LETTER],
};

describe('items explain', () => {
  it('prints a discarded entity as discarded, with the reason, who and when', () => {
    const lines = explanationLines({
      ...STORY,
      status: 'discarded',
      summary: 'Not stored, given up: …',
      discard: { at: '2026-03-01T10:00:00.000Z', by: 'arn:aws:iam::1:user/ops', reason: 'accepted' },
    } as never);
    expect(lines[0]).toBe('e-4: discarded');
    expect(lines).toContain('discarded: "accepted" by arn:aws:iam::1:user/ops at 2026-03-01T10:00:00.000Z');
    expect(lines).toContain('dead letter: item too large: 409600 bytes (run 01JRUN, 1 attempts)');
  });

  it('says who discarded it when the API knew no caller (locally)', () => {
    const lines = explanationLines({
      ...STORY,
      status: 'discarded',
      summary: '…',
      discard: { at: '2026-03-01T10:00:00.000Z', by: null, reason: 'accepted' },
    } as never);
    expect(lines).toContain(
      'discarded: "accepted" by the local API (no caller identity) at 2026-03-01T10:00:00.000Z',
    );
  });

  it('prints an open dead letter without a discard line', () => {
    const lines = explanationLines({
      ...STORY,
      status: 'dead_lettered',
      summary: '…',
      discard: null,
    } as never);
    expect(lines[0]).toBe('e-4: dead_lettered');
    expect(lines.some((line) => line.startsWith('discarded'))).toBe(false);
  });
});
