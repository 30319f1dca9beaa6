import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import type { ConnectorContext } from '../../lib/connectors/contract.js';
import { EntityGoneError, isGone } from '../../lib/connectors/gone.js';
import { s3ObjectsConnector } from '../../lib/connectors/s3-objects/index.js';
import { injectS3Faults, type S3Fault } from '../support/s3-faults.js';

/**
 * S3 errors are classified by the SDK's error name and metadata, never by HTTP status. Each case
 * makes the SDK itself build the error from S3's wire answer (status + XML body) — the object a
 * worker would really catch — by answering the request with a canned response. No network: every
 * request is faulted before it would leave.
 */

function faultyClient(fault: S3Fault) {
  const client = new S3Client({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:9',
    forcePathStyle: true,
    maxAttempts: 1,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  const faults = injectS3Faults(client);
  faults.failNext('*', fault, 100);
  return client;
}

async function sdkError(fault: S3Fault, command: 'list' | 'get' | 'head' = 'list'): Promise<unknown> {
  const client = faultyClient(fault);
  const input = { Bucket: 'b', Key: 'k' };
  try {
    if (command === 'list') await client.send(new ListObjectsV2Command({ Bucket: 'b' }));
    else if (command === 'get') await client.send(new GetObjectCommand(input));
    else await client.send(new HeadObjectCommand(input));
  } catch (error) {
    return error;
  } finally {
    client.destroy();
  }
  throw new Error('expected the request to fail');
}

describe('s3-objects classifies S3 answers by error code', () => {
  it.each([
    ['SlowDown', 503, 'transient'],
    ['RequestTimeout', 400, 'transient'],
    ['InternalError', 500, 'transient'],
    ['ServiceUnavailable', 503, 'transient'],
    ['Throttling', 400, 'transient'],
    ['AccessDenied', 403, 'permanent'],
    ['NoSuchBucket', 404, 'permanent'],
    ['InvalidObjectState', 403, 'permanent'],
    ['PermanentRedirect', 301, 'permanent'],
    // Unknown codes: the SDK's fault metadata decides (server → transient, client → permanent).
    ['SomethingNewAndBroken', 503, 'transient'],
    ['SomethingNewAndWrong', 400, 'permanent'],
  ] as const)('%s (HTTP %i) is %s', async (code, status, expected) => {
    const error = await sdkError({ kind: 'error', status, code });
    expect(error).toBeInstanceOf(S3ServiceException);
    expect((error as Error).name).toBe(code);
    const verdict = s3ObjectsConnector.classify(error, 0);
    expect(verdict.errorClass).toBe(expected);
    expect(verdict.reason).toContain(code);
  });

  it('tells InvalidObjectState from AccessDenied although both are HTTP 403', async () => {
    const archived = s3ObjectsConnector.classify(
      await sdkError({ kind: 'error', status: 403, code: 'InvalidObjectState' }, 'get'),
      0,
    );
    const denied = s3ObjectsConnector.classify(
      await sdkError({ kind: 'error', status: 403, code: 'AccessDenied' }, 'get'),
      0,
    );
    expect(archived.reason).toMatch(/archived/);
    expect(denied.reason).toMatch(/access denied/);
  });

  it.each(['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'])(
    'a network failure (%s) is transient',
    async (code) => {
      const verdict = s3ObjectsConnector.classify(await sdkError({ kind: 'network', code }), 0);
      expect(verdict.errorClass).toBe('transient');
    },
  );

  it('a certificate failure is permanent', async () => {
    const error = await sdkError({ kind: 'network', code: 'CERT_HAS_EXPIRED' });
    expect(s3ObjectsConnector.classify(error, 0).errorClass).toBe('permanent');
  });
});

describe('s3-objects fetchItem', () => {
  function ctx(client: S3Client): ConnectorContext {
    return { fetch: globalThis.fetch, secrets: async () => '', since: null, aws: { s3: () => client } };
  }
  const config = s3ObjectsConnector.configSchema.parse({ bucket: 'bucket-a' });

  it.each([
    ['NoSuchKey', 404],
    ['NotFound', 404],
  ] as const)('turns %s into "gone", which a reconciliation may tombstone', async (code, status) => {
    const client = faultyClient({ kind: 'error', status, code });
    const failure = await s3ObjectsConnector.fetchItem(config, 'a/key', ctx(client)).catch((e: unknown) => e);
    client.destroy();
    expect(failure).toBeInstanceOf(EntityGoneError);
    expect(isGone(failure)).toBe(true);
    expect(s3ObjectsConnector.classify(failure, 0)).toMatchObject({
      errorClass: 'permanent',
      reason: expect.stringMatching(/deleted at the source/),
    });
  });

  it('does not call a throttled item fetch gone', async () => {
    const client = faultyClient({ kind: 'error', status: 503, code: 'SlowDown' });
    const failure = await s3ObjectsConnector.fetchItem(config, 'a/key', ctx(client)).catch((e: unknown) => e);
    client.destroy();
    expect(isGone(failure)).toBe(false);
    expect(s3ObjectsConnector.classify(failure, 0).errorClass).toBe('transient');
  });
});
