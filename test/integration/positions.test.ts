import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { longRecordId } from '../../tools/fake-source/traits/ids.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';

/*
 * A tie group larger than a page, with long ids: one bulk `UPDATE … SET updated_at = now()` over
 * a table keyed by UUIDs. The keyset position inside the group names the ids read at its time —
 * more than a page message may carry — so it travels by reference and the run completes.
 */

const { engine, startFake, runToEnd } = useEngineWithFakes('positions');

describe('a tie group larger than a page, with UUID ids', () => {
  it('is read to the end with the default page size, every row stored exactly once', async () => {
    // 101 rows one second apart, then 230 rows touched in one bulk edit: page 2 holds 1 + 99 of
    // the tie group, page 3 is all tie, so its position names 199 UUIDs (~10 KB as a cursor).
    const fake = await startFake({ entities: 331, seed: 18, latencyMs: 0, traits: { longIds: true } });
    fake.control.touch(
      Array.from({ length: 230 }, (_, i) => 102 + i),
      { tied: true },
    );
    // Keyed by Harvester (`since` + the source's page numbers): the position is Harvester's own.
    const config = fakeRestConfig(fake.url, {
      url: `${fake.url}/records-paged`,
      pagination: { type: 'page' },
    });
    await putSource(engine.deps, 'positions-tie', 'rest-json', config);

    const run = await runToEnd('positions-tie', 'full', 60_000);

    expect(run.state).toBe('succeeded');
    expect(run.progress.processed).toBe(331);
    expect(run.errorCount).toBe(0);
    const items = await engine.deps.items.listAll('positions-tie');
    const truth = fake.truth().entities;
    expect(items).toHaveLength(truth.length);
    const stored = new Map(items.map((i) => [i.entityId, i.version]));
    for (const entity of truth) expect(stored.get(longRecordId(18, entity.number))).toBe(entity.updatedAt);
    // The positions inside the tie group were too large to travel: they were stored by reference.
    const { Items = [] } = await engine.aws.clients.doc.send(
      new ScanCommand({
        TableName: engine.aws.names.syncRunsTable,
        FilterExpression: 'positionOf = :run',
        ExpressionAttributeValues: { ':run': run.runId },
      }),
    );
    expect(Items.length).toBeGreaterThan(0);
  });
});
