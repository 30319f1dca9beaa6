import { afterEach, describe, expect, it } from 'vitest';
import type { ConnectorContext } from '../../lib/connectors/contract.js';
import { decodePosition, type KeysetPosition } from '../../lib/connectors/keyset.js';
import { restJsonConnector as rest, restJsonConfigSchema } from '../../lib/connectors/rest-json/index.js';
import { SourceHttpError } from '../../lib/retry/errors.js';
import { type FakeSource, fakeRestConfig, startFakeSource } from '../../tools/fake-source/index.js';

/**
 * Continuations that expire inside a tie group. A keyed stream follows the source's own token
 * only inside a group of records sharing one modification time (one bulk `UPDATE`), and such
 * tokens die: Elasticsearch's scroll ids past their keep-alive (404), Salesforce's query locators
 * after 15 idle minutes (400 `INVALID_QUERY_LOCATOR`), Google's page tokens (400), an evicted
 * continuation (410) — typically while the run waited out a rate limit or was resumed by the
 * reaper. The run lists the group again from its own key and passes over what it served.
 */

const ENTITIES = 30;
/** Entities 3–20 edited in one statement: a tie group of 18, four pages of 5. */
const TIED = Array.from({ length: 18 }, (_, i) => i + 3);

let fake: FakeSource | undefined;
afterEach(async () => {
  await fake?.stop();
  fake = undefined;
});

async function tiedSource(): Promise<FakeSource> {
  fake = await startFakeSource({ entities: ENTITIES, seed: 31, latencyMs: 0 });
  fake.control.touch(TIED, { tied: true });
  return fake;
}

interface Read {
  readonly delivered: string[];
  /** The earliest watermark ceiling a page set; null: none. */
  readonly ceiling: string | null;
  /** Statuses the source answered, in order. */
  readonly statuses: number[];
}

/**
 * Reads the keyed cursor stream (the source's cursor not declared stable: the run keeps its own
 * key) from `since`, calling `before(position, follows)` ahead of each page, where `follows` counts
 * the pages so far that followed the source's token.
 */
async function read(
  source: FakeSource,
  since: string | null,
  before: (position: KeysetPosition, follows: number) => void = () => {},
): Promise<Read> {
  const config = restJsonConfigSchema.parse(
    fakeRestConfig(source.url, {
      pageSize: 5,
      pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' },
    }),
  );
  const statuses: number[] = [];
  const counted = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    return response;
  }) as typeof fetch;
  const ctx: ConnectorContext = { fetch: counted, secrets: async () => '', since };
  const delivered: string[] = [];
  let ceiling: string | null = null;
  let cursor: string | null = null;
  let follows = 0;
  for (let pages = 0; pages < 100; pages++) {
    const position = decodePosition(cursor, since);
    before(position, follows);
    if (position.follow !== undefined) follows += 1;
    const page = await rest.fetchPage(config, cursor, ctx);
    for (const raw of page.items) {
      const normalized = rest.normalize(config, raw);
      if (normalized.ok) delivered.push(normalized.entity.id);
    }
    const capped = page.watermarkCeiling ?? null;
    if (capped !== null && (ceiling === null || capped < ceiling)) ceiling = capped;
    cursor = page.nextCursor;
    if (cursor === null) return { delivered, ceiling, statuses };
  }
  throw new Error('the stream did not end in 100 pages');
}

const tieTime = (source: FakeSource) =>
  source.truth().entities.find((e) => TIED.includes(e.number))?.updatedAt ?? '';
const liveIds = (source: FakeSource) =>
  source
    .truth()
    .entities.map((e) => e.id)
    .sort();

describe('a source token that expires inside a tie group', () => {
  it('lists the group again from the run’s key: every entity once, and the watermark moves on', async () => {
    const source = await tiedSource();
    const result = await read(source, null, (position, follows) => {
      if (position.follow !== undefined && follows === 1) source.control.expireCursors();
    });
    expect(result.statuses).toContain(410);
    expect([...result.delivered].sort()).toEqual(liveIds(source));
    expect(new Set(result.delivered).size).toBe(result.delivered.length);
    expect(result.ceiling).toBeNull();
  });

  it('holds the watermark at the group when a served member left it meanwhile, and the next run reads what the skip passed', async () => {
    const source = await tiedSource();
    let gone: string | undefined;
    const first = await read(source, null, (position, follows) => {
      if (position.follow === undefined || follows !== 1) return;
      // A member the stretch served is deleted before the run lists the group again: every
      // member behind it moves one place up, and passing over by count lands one too far.
      gone = position.ids[0];
      source.control.delete([gone ?? '']);
      source.control.expireCursors();
    });
    expect(gone).toBeDefined();
    expect(first.ceiling).toBe(tieTime(source));
    const next = await read(source, first.ceiling);
    const harvested = new Set([...first.delivered, ...next.delivered]);
    expect([...harvested].filter((id) => id !== gone).sort()).toEqual(liveIds(source));
  });

  it('stops passing over at the first record past the group, when the group shrank below what it served', async () => {
    const source = await tiedSource();
    // Three entities edited after the bulk edit: listed after the group.
    const later = source.control.touch([25, 26, 27]).changed.map((e) => e.id);
    const first = await read(source, null, (position, follows) => {
      // The stretch served pages of 5 from the group's first (not followed), so 15 members here.
      if (position.follow === undefined || follows !== 2) return;
      // Ten members the stretch served are deleted: the group is now shorter than what it served.
      const served = TIED.slice(0, 10).map((n) => `e-${String(n).padStart(6, '0')}`);
      source.control.delete(served);
      source.control.expireCursors();
    });
    expect(first.statuses).toContain(410);
    expect(first.delivered).toEqual(expect.arrayContaining(later));
    expect(new Set(first.delivered).size).toBe(first.delivered.length);
    // Members 18–20 moved up into the part passed over: the watermark holds for the next run.
    expect(first.ceiling).toBe(tieTime(source));
    const next = await read(source, first.ceiling);
    expect([...new Set([...first.delivered, ...next.delivered])].sort()).toEqual(
      expect.arrayContaining(liveIds(source)),
    );
  });

  it('fails the page when the token expires again before the stretch moved past its restart', async () => {
    const source = await tiedSource();
    const failed = await read(source, null, (position) => {
      if (position.follow !== undefined) source.control.expireCursors();
    }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(SourceHttpError);
    expect((failed as SourceHttpError).status).toBe(410);
  });
});
