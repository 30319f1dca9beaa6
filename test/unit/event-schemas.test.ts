import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runEventDetail } from '../../lib/engine/index.js';
import { entityEventOf, streamFilterPattern, supersedes } from '../../lib/events/change-feed.js';
import {
  DETAIL_SCHEMAS,
  DETAIL_TYPES,
  detailJsonSchema,
  EntityEventDetailSchema,
  RunEventDetailSchema,
} from '../../lib/events/details.js';
import type { SyncRun } from '../../lib/run/model.js';

const RUN_ID = '01J9ZQ4T7J8Y2K3M4N5P6Q7R8S';

function streamRecord(lastWrite: string, extra: Record<string, unknown> = {}) {
  return {
    eventName: 'MODIFY',
    dynamodb: {
      Keys: { sourceId: { S: 'acme' }, entityId: { S: '42' } },
      NewImage: {
        sourceId: { S: 'acme' },
        entityId: { S: '42' },
        version: { S: '2025-05-01T10:00:00.000Z' },
        data: { M: { title: { S: 'Broken login' }, votes: { N: '12345678901234567890' } } },
        runId: { S: RUN_ID },
        changedBy: { S: RUN_ID },
        changedAt: { N: '1746093600000' },
        syncedAt: { N: '1746093600000' },
        lastWrite: { S: lastWrite },
        changeSeq: { N: '3' },
        ...extra,
      },
    },
  };
}

describe('event detail JSON Schemas', () => {
  it.each(Object.keys(DETAIL_SCHEMAS) as (keyof typeof DETAIL_SCHEMAS)[])(
    'docs/events/%s.schema.json is the schema the code holds its details to (regenerate: npx tsx scripts/event-schemas.ts)',
    (name) => {
      const committed = JSON.parse(
        readFileSync(new URL(`../../docs/events/${name}.schema.json`, import.meta.url), 'utf8'),
      );
      expect(committed).toEqual(detailJsonSchema(name));
    },
  );
});

describe('what the code emits', () => {
  it('a run outcome detail matches the SyncRun schema', () => {
    const run = {
      runId: RUN_ID,
      sourceId: 'acme',
      mode: 'incremental',
      state: 'succeeded',
      progress: { processed: 10, total: 10, pages: 1 },
      errorCount: 0,
      failure: null,
      resume: { reason: 'fresh_start', from: 'scratch', at: 1 },
      startedAt: 1,
      finishedAt: 2,
    } as unknown as SyncRun;

    expect(RunEventDetailSchema.safeParse(runEventDetail(run)).success).toBe(true);
    expect(RunEventDetailSchema.safeParse({ ...runEventDetail(run), extra: 1 }).success).toBe(false);
  });

  it.each([
    ['changed', DETAIL_TYPES.entityChanged],
    ['tombstoned', DETAIL_TYPES.entityTombstoned],
  ])('a %s write publishes %s, its detail matching the entity schema, without data', (lastWrite, type) => {
    const tombstone = lastWrite === 'tombstoned' ? { tombstonedAt: { N: '1746093600000' } } : {};
    const event = entityEventOf(streamRecord(lastWrite, tombstone), false);

    expect(event?.detailType).toBe(type);
    expect(EntityEventDetailSchema.parse(event?.detail)).toEqual({
      sourceId: 'acme',
      entityId: '42',
      version: '2025-05-01T10:00:00.000Z',
      changeSequence: 3,
      runId: RUN_ID,
      changedAt: '2025-05-01T10:00:00.000Z',
      tombstonedAt: lastWrite === 'tombstoned' ? '2025-05-01T10:00:00.000Z' : null,
      link: '/sources/acme/items/42',
    });
  });

  it('carries the data only when opted in, numbers beyond a double kept exact', () => {
    const event = entityEventOf(streamRecord('changed'), true);

    expect(EntityEventDetailSchema.safeParse(event?.detail).success).toBe(true);
    expect(event?.detail.data?.title).toBe('Broken login');
    expect(String(event?.detail.data?.votes)).toBe('12345678901234567890');
  });

  it.each(['unchanged', 'seen'])(
    'a %s write publishes nothing, and the pipe filter lets it by neither',
    (lastWrite) => {
      expect(entityEventOf(streamRecord(lastWrite), false)).toBeNull();
      const patterns = [streamFilterPattern('changed'), streamFilterPattern('tombstoned')];
      expect(JSON.stringify(patterns)).not.toContain(`"${lastWrite}"`);
    },
  );
});

describe("the order of one entity's events", () => {
  // A stored entity (change 1), tombstoned (change 2), then stored again by a later run (change 3),
  // at the same version: neither version nor a writer's clock could order these.
  const record = (lastWrite: string, changeSeq: number, changedAt: number) =>
    entityEventOf(
      streamRecord(lastWrite, {
        changeSeq: { N: String(changeSeq) },
        changedAt: { N: String(changedAt) },
        ...(lastWrite === 'tombstoned' ? { tombstonedAt: { N: String(changedAt) } } : {}),
      }),
      false,
    )!.detail;
  const stored = record('changed', 1, 1_000);
  const tombstoned = record('tombstoned', 2, 2_000);
  // The reviving writer's clock runs behind: its stamp is older than the tombstone's.
  const revived = record('changed', 3, 1_500);
  const latest = (arrivals: (typeof stored)[]) =>
    arrivals.reduce<typeof stored | undefined>((held, e) => (supersedes(e, held) ? e : held), undefined);

  it.each([
    ['in order', [stored, tombstoned, revived]],
    ['reversed', [revived, tombstoned, stored]],
    ['tombstone last', [stored, revived, tombstoned]],
    ['with repeats', [tombstoned, revived, tombstoned, stored, revived]],
  ])('delivered %s, the consumer keeps the greatest changeSequence: the revived entity', (_, arrivals) => {
    expect(latest(arrivals)).toBe(revived);
  });

  it('a repeat of the held change does not supersede it, a later one does', () => {
    expect(supersedes(tombstoned, tombstoned)).toBe(false);
    expect(supersedes(stored, tombstoned)).toBe(false);
    expect(supersedes(revived, tombstoned)).toBe(true);
  });

  it('an event of another entity is never held back by this one', () => {
    expect(supersedes({ ...stored, entityId: '43' }, revived)).toBe(true);
  });
});
