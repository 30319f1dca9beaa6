import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import type { Entity } from '../../lib/connectors/contract.js';
import { ItemStore } from '../../lib/store/items.js';
import { setUpTestAws, type TestAws } from '../support/aws.js';

/*
 * The item store's conditional writes, driven directly: which write an equal version takes, rows
 * written before an attribute existed, and the reconciliation marks. Fenced writes (older epochs,
 * older runs, older versions) are in item-fencing.test.ts.
 */

let aws: TestAws;
let items: ItemStore;
const T = '2026-01-01T00:00:00Z';

beforeAll(async () => {
  aws = await setUpTestAws('itemstore');
  items = new ItemStore(aws.clients.doc, aws.names.itemsTable);
});
afterAll(() => destroyAwsClients(aws.clients));

const entity = (title: string, version = T): Entity => ({ id: 'e1', version, data: { title } });

/** A row as written before `writer` and `contentHash` were recorded. */
async function putLegacyRow(sourceId: string, title: string): Promise<void> {
  await aws.clients.doc.send(
    new PutCommand({
      TableName: aws.names.itemsTable,
      Item: { sourceId, entityId: 'e1', version: T, data: { title }, runId: 'old-run', syncedAt: 1 },
    }),
  );
}

describe('an item write at an equal version', () => {
  it('with the same content is written as unchanged; with new content, as changed', async () => {
    await items.load('equal', entity('first'), 'run-1', 1, 1);

    expect(await items.load('equal', entity('first'), 'run-1', 2, 1)).toEqual({
      entityId: 'e1',
      status: 'written',
      changed: false,
    });
    expect(await items.load('equal', entity('second'), 'run-1', 3, 1)).toEqual({
      entityId: 'e1',
      status: 'written',
      changed: true,
    });
    expect(await items.get('equal', 'e1')).toMatchObject({ data: { title: 'second' }, lastWrite: 'changed' });
  });

  it('over a row stored before writers and content hashes were recorded is written as a change', async () => {
    await putLegacyRow('legacy', 'old');

    const result = await items.load('legacy', entity('old'), 'run-1', 2, 1);

    expect(result).toEqual({ entityId: 'e1', status: 'written', changed: true });
    expect(await items.get('legacy', 'e1')).toMatchObject({ runId: 'run-1', lastWrite: 'changed' });
  });

  it('is one change when two deliveries of a page bring the same new content: the later one changes nothing', async () => {
    await items.load('twice', entity('old'), 'run-1', 1, 1);
    // Delivery B reads the stored content as old (its unchanged-write fails), then waits while
    // delivery A stores the new content; B then finds that content already stored.
    let bReady!: () => void;
    const bAtChange = new Promise<void>((resolve) => {
      bReady = resolve;
    });
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    let sends = 0;
    const gatedDoc = {
      send: async (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
        if (++sends === 3) {
          bReady();
          await gate;
        }
        return aws.clients.doc.send(command);
      },
    } as unknown as DynamoDBDocumentClient;
    const b = new ItemStore(gatedDoc, aws.names.itemsTable, () => 222).load(
      'twice',
      entity('new'),
      'run-2',
      3,
      1,
    );
    await bAtChange;

    const a = await new ItemStore(aws.clients.doc, aws.names.itemsTable, () => 111).load(
      'twice',
      entity('new'),
      'run-2',
      2,
      1,
    );
    openGate();

    expect(a).toEqual({ entityId: 'e1', status: 'written', changed: true });
    expect(await b).toEqual({ entityId: 'e1', status: 'kept_newer' });
    expect(await items.get('twice', 'e1')).toMatchObject({ changedAt: 111, data: { title: 'new' } });
  });
});

describe('the reconciliation marks', () => {
  it('markSeen marks a stored entity seen and leaves an unknown one alone', async () => {
    await items.load('seen', entity('here'), 'run-1', 1, 1);

    await items.markSeen('seen', 'e1', 'recon-1');
    await items.markSeen('seen', 'unknown', 'recon-1');

    expect(await items.get('seen', 'e1')).toMatchObject({ lastSeenRunId: 'recon-1', lastWrite: 'seen' });
    expect(await items.get('seen', 'unknown')).toBeUndefined();
  });

  it('tombstone marks a live entity the run did not see, once; never one it saw, nor an unknown one', async () => {
    await items.load('tomb', entity('gone'), 'run-1', 1, 1);
    await items.load('tomb', { ...entity('seen'), id: 'e2' }, 'run-1', 1, 1);
    await items.markSeen('tomb', 'e2', 'recon-1');

    expect(await items.tombstone('tomb', 'e1', 'recon-1', 10)).toBe(true);
    expect(await items.tombstone('tomb', 'e1', 'recon-2', 20)).toBe(false);
    expect(await items.tombstone('tomb', 'e2', 'recon-1', 10)).toBe(false);
    expect(await items.tombstone('tomb', 'unknown', 'recon-1', 10)).toBe(false);

    expect(await items.get('tomb', 'e1')).toMatchObject({ tombstonedAt: 10, tombstonedBy: 'recon-1' });
    expect((await items.get('tomb', 'e2'))?.tombstonedAt).toBeUndefined();
    expect(await items.get('tomb', 'unknown')).toBeUndefined();
  });

  it('tombstone marks a row no run has marked seen yet', async () => {
    await putLegacyRow('tomb-legacy', 'old');

    expect(await items.tombstone('tomb-legacy', 'e1', 'recon-1', 10)).toBe(true);
    expect(await items.get('tomb-legacy', 'e1')).toMatchObject({ tombstonedAt: 10 });
  });
});

describe('the key slices a reconciliation walks', () => {
  it('keySlice pages through a source’s stored keys in order, and says when there are no more', async () => {
    for (const id of ['a', 'b', 'c']) await items.load('slices', { ...entity('x'), id }, 'run-1', 1, 1);

    const first = await items.keySlice('slices', null, 2);
    const rest = await items.keySlice('slices', first.next, 2);

    expect(first.items.map((item) => item.entityId)).toEqual(['a', 'b']);
    expect(first.next).toBe('b');
    expect(rest).toEqual({ items: [expect.objectContaining({ entityId: 'c' })], next: null });
  });
});

describe('an equal-version write over a tombstone', () => {
  it('by a run that started after the tombstone clears it, with new content or the same', async () => {
    await items.load('revive', entity('kept'), 'run-1', 1, 1);
    await items.load('revive', { ...entity('kept'), id: 'e2' }, 'run-1', 1, 1);
    await items.tombstone('revive', 'e1', 'recon-1', 100);
    await items.tombstone('revive', 'e2', 'recon-1', 100);

    expect(await items.load('revive', entity('kept'), 'run-2', 200, 1, undefined, undefined, 150)).toEqual({
      entityId: 'e1',
      status: 'written',
      changed: true,
    });
    await items.load(
      'revive',
      { ...entity('restored'), id: 'e2' },
      'run-2',
      200,
      1,
      undefined,
      undefined,
      150,
    );

    expect((await items.get('revive', 'e1'))?.tombstonedAt).toBeUndefined();
    const e2 = await items.get('revive', 'e2');
    expect(e2?.tombstonedAt).toBeUndefined();
    expect(e2?.data).toEqual({ title: 'restored' });
  });

  it('by a run that started before the tombstone leaves it, and never writes new content under it', async () => {
    await items.load('late', entity('old'), 'run-1', 1, 1);
    await items.tombstone('late', 'e1', 'recon-1', 100);

    const result = await items.load('late', entity('new'), 'run-2', 200, 1, undefined, undefined, 50);

    expect(result).toEqual({ entityId: 'e1', status: 'kept_newer' });
    expect(await items.get('late', 'e1')).toMatchObject({ tombstonedAt: 100, data: { title: 'old' } });
  });

  it('with a read first takes the same decisions', async () => {
    await items.load('read-revive', entity('kept'), 'run-1', 1, 1);
    await items.tombstone('read-revive', 'e1', 'recon-1', 100);
    const stored = await items.get('read-revive', 'e1');
    const read = { stored: stored ?? null, skipUnchanged: true } as never;

    expect(
      await items.load('read-revive', entity('kept'), 'run-2', 200, 1, undefined, read, 150),
    ).toMatchObject({
      status: 'written',
    });
    expect((await items.get('read-revive', 'e1'))?.tombstonedAt).toBeUndefined();
  });
});
