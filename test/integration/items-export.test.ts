import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { ApiClient } from '../../lib/cli/client.js';
import { exportItems, exportStatePath } from '../../lib/cli/export.js';
import type { Io } from '../../lib/cli/output.js';
import { type DevServer, startDevServer } from '../../lib/local/dev-server.js';
import { setUpTestApi } from '../support/api.js';
import type { TestAws } from '../support/aws.js';

/** `harvester items export` against the local API: every entity once, and once again after a crash. */

// Ten pages of 100: enough for a crash at page 7 to leave pages on both sides of it.
const ENTITIES = 1_000;
const SOURCE = 'export-src';
let aws: TestAws;
let server: DevServer;
let client: ApiClient;
let dir: string;
const quiet: Io = {
  out: new Writable({ write: (_c, _e, done) => done() }),
  err: new Writable({ write: (_c, _e, done) => done() }),
};

beforeAll(async () => {
  const api = await setUpTestApi('items-export');
  aws = api.aws;
  await api.deps.sources.put(
    { sourceId: SOURCE, connector: 'rest-json', config: {}, schedules: [], configHash: 'x' },
    Date.now(),
  );
  // Rows as a run stores them, written in batches (the export reads them; how they got there does not matter).
  const now = Date.now();
  await putAll(
    Array.from({ length: ENTITIES }, (_, i) => ({
      sourceId: SOURCE,
      entityId: `e-${String(i).padStart(6, '0')}`,
      version: new Date(now - i * 1_000).toISOString(),
      data: { n: i, title: `entity ${i}` },
      runId: '01J9ZQ4T7J8Y2K3M4N5P6Q7R8S',
      syncedAt: now,
      changedAt: now,
    })),
  );
  server = await startDevServer({ deps: api.deps });
  client = new ApiClient({ endpoint: server.url });
  dir = await mkdtemp(join(tmpdir(), 'harvester-export-'));
}, 120_000);
afterAll(async () => {
  await server?.stop();
  destroyAwsClients(aws.clients);
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function putAll(items: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < items.length; i += 25) {
    let requests = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    while (requests.length > 0) {
      const { UnprocessedItems } = await aws.clients.doc.send(
        new BatchWriteCommand({ RequestItems: { [aws.names.itemsTable]: requests } }),
      );
      requests = (UnprocessedItems?.[aws.names.itemsTable] ?? []) as typeof requests;
    }
  }
}

async function linesOf(path: string): Promise<string[]> {
  return (await readFile(path, 'utf8')).split('\n').filter((line) => line.length > 0);
}

describe('items export', () => {
  it(`writes ${ENTITIES} entities as ${ENTITIES} JSON lines`, async () => {
    const output = join(dir, 'all.jsonl');

    const result = await exportItems(
      client,
      { sourceId: SOURCE, output, resume: false, pageSize: 100 },
      quiet,
    );

    const lines = await linesOf(output);
    expect(result).toEqual({ lines: ENTITIES, pages: ENTITIES / 100, resumedFrom: 0 });
    expect(lines).toHaveLength(ENTITIES);
    expect(new Set(lines.map((line) => JSON.parse(line).entityId)).size).toBe(ENTITIES);
  }, 120_000);

  it('resumed after a crash between writing a page and recording it, writes no line twice and skips none', async () => {
    const output = join(dir, 'resumed.jsonl');
    const crash = (page: number) => {
      if (page === 7) throw new Error('killed');
    };

    await expect(
      exportItems(
        client,
        { sourceId: SOURCE, output, resume: false, pageSize: 100, afterWrite: crash },
        quiet,
      ),
    ).rejects.toThrow('killed');
    const written = await linesOf(output);
    const resumed = await exportItems(
      client,
      { sourceId: SOURCE, output, resume: true, pageSize: 100 },
      quiet,
    );

    // The crashed attempt wrote 7 pages but recorded 6: the 7th is cut and written again once.
    expect(written).toHaveLength(700);
    expect(resumed.resumedFrom).toBe(600);
    expect(resumed.lines).toBe(ENTITIES - 600);
    const lines = await linesOf(output);
    expect(lines).toHaveLength(ENTITIES);
    expect(new Set(lines.map((line) => JSON.parse(line).entityId)).size).toBe(ENTITIES);
    expect(JSON.parse(await readFile(exportStatePath(output), 'utf8'))).toMatchObject({
      done: true,
      lines: ENTITIES,
    });
  }, 120_000);

  it('never overwrites an existing file unless told to (--force)', async () => {
    const output = join(dir, 'kept.jsonl');
    await writeFile(output, 'precious\n');

    await expect(
      exportItems(client, { sourceId: SOURCE, output, resume: false, pageSize: 100 }, quiet),
    ).rejects.toThrow(/exists; pass --force/);
    expect(await readFile(output, 'utf8')).toBe('precious\n');
    await exportItems(client, { sourceId: SOURCE, output, resume: false, force: true, pageSize: 100 }, quiet);
    expect(await linesOf(output)).toHaveLength(ENTITIES);
  }, 120_000);

  it('refuses to resume an export of another listing', async () => {
    const output = join(dir, 'other.jsonl');
    await exportItems(
      client,
      { sourceId: SOURCE, output, resume: false, pageSize: 100, changedSince: new Date().toISOString() },
      quiet,
    );

    await expect(
      exportItems(client, { sourceId: SOURCE, output, resume: true, pageSize: 100 }, quiet),
    ).rejects.toThrow(/another listing/);
  });
});
