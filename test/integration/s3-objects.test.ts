import type { S3Client } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { startRun } from '../../lib/engine/index.js';
import type { RunMode } from '../../lib/run/model.js';
import { putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { createBucket, deleteObject, objectKey, putObject } from '../support/s3.js';
import { injectS3Faults, type S3FaultInjector } from '../support/s3-faults.js';

/**
 * The `s3-objects` connector end to end against the emulator's S3 (moto): the real SDK, the real
 * engine, faults injected into the S3 client as S3 itself would answer them.
 */

let s3: S3Client;
let faults: S3FaultInjector;
let counter = 0;
/** The emulator's account: the one the engine expects to own every bucket it reads. */
const OWNER = '123456789012';

// No lookback and no skew margin in these tests, so "modified after the watermark" is exact
// to the second without waiting minutes.
const { engine } = useEngineWithFakes('s3obj', {
  workers: 1,
  env: { WATERMARK_LOOKBACK_SECONDS: '0', SOURCE_BUCKET_OWNER: OWNER },
});
beforeAll(async () => {
  s3 = engine.aws.clients.s3();
  faults = injectS3Faults(s3);
});

async function bucketWith(count: number, options: { outside?: number } = {}): Promise<string> {
  const bucket = `${engine.aws.prefix}-${++counter}`;
  await createBucket(s3, bucket);
  for (let n = 1; n <= count; n++)
    await putObject(s3, bucket, objectKey('data/', n), { n, title: `object ${n}` });
  for (let n = 1; n <= (options.outside ?? 0); n++)
    await putObject(s3, bucket, objectKey('other/', n), { n });
  return bucket;
}

async function runToEnd(sourceId: string, mode: RunMode) {
  const started = await startRun(engine.deps, { sourceId, mode });
  return waitForRun(engine.deps, started.runId, undefined, 60_000);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('s3-objects against the emulator', () => {
  it('a full run stores every object under the prefix: id = key, version = LastModified (ETag in the data), metadata and small JSON bodies', async () => {
    const bucket = await bucketWith(12, { outside: 3 });
    await putObject(s3, bucket, 'data/broken.json', '{"not": json');
    await putObject(s3, bucket, 'data/big.json', { pad: 'x'.repeat(500) });
    await putObject(s3, bucket, 'data/readme.txt', 'plain text');
    await putSource(engine.deps, 's3-full', 's3-objects', {
      bucket,
      prefix: 'data/',
      pageSize: 4,
      jsonBodies: { maxBytes: 200 },
    });

    const run = await runToEnd('s3-full', 'full');

    expect(run.state).toBe('succeeded');
    expect(run.progress).toMatchObject({ processed: 14, pages: 4 });
    expect(run.errorCount).toBe(1);
    const items = new Map((await engine.deps.items.listAll('s3-full')).map((i) => [i.entityId, i]));
    expect([...items.keys()].every((key) => key.startsWith('data/'))).toBe(true);
    const first = items.get('data/0001.json');
    expect(first?.version).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
    expect(first?.data.etag).toMatch(/^[0-9a-f]{32}$/);
    expect(first?.data).toMatchObject({ key: 'data/0001.json', body: { n: 1, title: 'object 1' } });
    expect(items.get('data/big.json')?.data).toMatchObject({ bodySkipped: 'too_large' });
    expect(items.get('data/big.json')?.data.body).toBeUndefined();
    expect(items.get('data/readme.txt')?.data.body).toBeUndefined();
    const [dead] = await engine.deps.deadLetters.listAll('s3-full');
    expect(dead).toMatchObject({ ref: 'data/broken.json', reason: expect.stringMatching(/not valid JSON/) });
  });

  it('an incremental run lists every key but loads only objects modified since the watermark, which is the listing start minus the margin', async () => {
    const bucket = await bucketWith(10);
    await putSource(engine.deps, 's3-inc', 's3-objects', {
      bucket,
      prefix: 'data/',
      pageSize: 3,
      clockSkewMarginSeconds: 0,
    });
    // S3 times are whole seconds: let the uploads' second pass before the first listing starts.
    await sleep(1_100);
    const before = Date.now();
    const first = await runToEnd('s3-inc', 'incremental');
    const after = Date.now();
    const watermark = Date.parse((await engine.deps.sources.require('s3-inc')).watermark ?? '');
    expect(first.progress.processed).toBe(10);
    // The listing started between `before` and the run's end, at S3's whole-second precision (a
    // loaded machine can start it in a later second than `before`).
    expect(watermark % 1_000).toBe(0);
    expect(watermark).toBeGreaterThanOrEqual(Math.floor(before / 1_000) * 1_000);
    expect(watermark).toBeLessThanOrEqual(after);

    await putObject(s3, bucket, objectKey('data/', 2), { n: 2, title: 'edited' });
    await putObject(s3, bucket, objectKey('data/', 9), { n: 9, title: 'edited' });
    await putObject(s3, bucket, objectKey('data/', 11), { n: 11, title: 'new' });
    faults.clear();
    const beforeSecond = Date.now();
    const second = await runToEnd('s3-inc', 'incremental');

    expect(second.state).toBe('succeeded');
    expect(second.progress.processed).toBe(3);
    const lists = faults.requests.filter((r) => r.command === 'ListObjectsV2Command');
    // Every key listed (11 keys, 3 a page), each page after the last key of the one before.
    expect(lists.map((r) => r.input.StartAfter)).toEqual([
      undefined,
      'data/0003.json',
      'data/0006.json',
      'data/0009.json',
    ]);
    const edited = await engine.deps.items.get('s3-inc', objectKey('data/', 9));
    expect(edited?.runId).toBe(second.runId);
    const untouched = await engine.deps.items.get('s3-inc', objectKey('data/', 5));
    expect(untouched?.runId).toBe(first.runId);
    const next = (await engine.deps.sources.require('s3-inc')).watermark!;
    expect(Date.parse(next)).toBeGreaterThanOrEqual(Math.floor(beforeSecond / 1_000) * 1_000);
    expect(Date.parse(next)).toBeLessThanOrEqual(Date.now());
  });

  it('SlowDown answers are retried with backoff and the run loses nothing', async () => {
    const bucket = await bucketWith(9);
    await putSource(engine.deps, 's3-slow', 's3-objects', { bucket, pageSize: 4 });
    faults.clear();
    faults.failNext(
      'ListObjectsV2Command',
      { kind: 'error', status: 503, code: 'SlowDown', message: 'Please reduce your request rate.' },
      3,
    );

    const run = await runToEnd('s3-slow', 'full');

    expect(run.state).toBe('succeeded');
    expect(run.progress.processed).toBe(9);
    expect(run.errorCount).toBe(0);
    expect(faults.requests.filter((r) => r.faulted)).toHaveLength(3);
  });

  it('AccessDenied is permanent: no retries, the page is dead-lettered with the reason and the run fails', async () => {
    const bucket = await bucketWith(3);
    await putSource(engine.deps, 's3-denied', 's3-objects', { bucket });
    faults.clear();
    faults.failNext(
      'ListObjectsV2Command',
      { kind: 'error', status: 403, code: 'AccessDenied', message: 'Access Denied' },
      5,
    );

    const run = await runToEnd('s3-denied', 'full');

    expect(run.state).toBe('failed');
    expect(faults.requests.filter((r) => r.command === 'ListObjectsV2Command')).toHaveLength(1);
    const [dead] = await engine.deps.deadLetters.listAll('s3-denied');
    expect(dead).toMatchObject({
      kind: 'page',
      errorClass: 'permanent',
      reason: expect.stringMatching(/AccessDenied/),
    });
    faults.clear();
  });

  it('a missing bucket is NoSuchBucket from the real emulator, permanent', async () => {
    await putSource(engine.deps, 's3-nobucket', 's3-objects', { bucket: `${engine.aws.prefix}-missing` });
    const run = await runToEnd('s3-nobucket', 'full');
    expect(run.state).toBe('failed');
    const [dead] = await engine.deps.deadLetters.listAll('s3-nobucket');
    expect(dead?.reason).toMatch(/NoSuchBucket/);
  });

  it('a reconciliation tombstones deleted objects and only those', async () => {
    const bucket = await bucketWith(6);
    await putSource(engine.deps, 's3-rec', 's3-objects', { bucket, pageSize: 4 });
    await runToEnd('s3-rec', 'full');
    await deleteObject(s3, bucket, objectKey('data/', 3));

    const run = await runToEnd('s3-rec', 'reconciliation');

    expect(run.state).toBe('succeeded');
    const items = await engine.deps.items.listAll('s3-rec');
    const tombstoned = items.filter((i) => i.tombstonedAt !== undefined).map((i) => i.entityId);
    expect(tombstoned).toEqual([objectKey('data/', 3)]);
  });

  it('every read names the account that must own the bucket (ExpectedBucketOwner): a same-named bucket elsewhere is refused by S3', async () => {
    const bucket = await bucketWith(3);
    await putSource(engine.deps, 's3-owner', 's3-objects', { bucket, jsonBodies: { maxBytes: 200 } });
    await runToEnd('s3-owner', 'full');
    await deleteObject(s3, bucket, objectKey('data/', 2));
    faults.clear();

    await runToEnd('s3-owner', 'full');
    await runToEnd('s3-owner', 'reconciliation'); // confirms the absence with HeadObject

    const reads = faults.requests.filter((r) => r.input.Bucket === bucket);
    expect(new Set(reads.map((r) => r.command))).toEqual(
      new Set(['ListObjectsV2Command', 'GetObjectCommand', 'HeadObjectCommand']),
    );
    expect(reads.filter((r) => r.input.ExpectedBucketOwner !== OWNER)).toEqual([]);
  });
});
