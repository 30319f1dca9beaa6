import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { Connector, ConnectorContext } from '../../lib/connectors/contract.js';
import { getConnector } from '../../lib/connectors/registry.js';
import { type FakeSource, fakeRestConfig, startFakeSource } from '../../lib/local/fake-source/index.js';
import { createBucket, deleteObject, objectKey, putObject } from '../support/s3.js';
import { injectS3Faults } from '../support/s3-faults.js';

/**
 * The connectors under contract, each with a live source to read: the fake source's GitHub,
 * GitLab and rest-json shapes, and a bucket on the emulator's S3. A subject knows how to edit its
 * source mid-run, what the source holds (ground truth, in the connector's ids and versions), how
 * to make the source answer with its own throttling, and which secret it sends.
 */

/** The secret every credentialed subject sends: it must never appear in an error or a log. */
export const CONTRACT_SECRET = 'glpat-CONTRACT-s3cr3t-7f3a9c';

/** One throttling answer: the error the connector threw, and whether the source named a wait. */
export interface ThrottleAnswer {
  readonly name: string;
  readonly error: unknown;
  readonly asksForWait: boolean;
}

/** A connector with a live source, set up for one test. */
export interface Subject {
  readonly name: string;
  readonly connector: Connector<unknown>;
  readonly config: unknown;
  ctx(since: string | null): ConnectorContext;
  /** Live, valid entities: id → version, as the connector names them. */
  truth(): Promise<Map<string, string>>;
  /** Changes the source: edits entities already read and not yet read, adds new ones. */
  edit(round: number): Promise<void>;
  /** The source's own throttling answers, as the connector's fetchPage throws them. */
  throttled(): Promise<ThrottleAnswer[]>;
  /** An answer to a request that sent {@link CONTRACT_SECRET} and was refused. */
  refused(): Promise<unknown>;
  stop(): Promise<void>;
}

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected the request to fail');
}

type HttpShape = 'github-issues' | 'gitlab-issues' | 'rest-json';

/** A subject over the fake source (`entities` at start, `pageSize` per page). */
export async function httpSubject(name: HttpShape, seed: number): Promise<Subject> {
  const fake: FakeSource = await startFakeSource({ entities: 45, seed, latencyMs: 0 });
  const connector = getConnector(name);
  const tokenRef = 'ssm:/harvester/contract/token';
  const raw =
    name === 'github-issues'
      ? { owner: 'octo', repo: 'contract', baseUrl: fake.url, perPage: 10, tokenRef }
      : name === 'gitlab-issues'
        ? { project: 'acme/contract', baseUrl: `${fake.url}/api/v4`, perPage: 10, tokenRef }
        : fakeRestConfig(fake.url, {
            pageSize: 10,
            auth: { header: 'Authorization', prefix: 'Bearer ', secretRef: tokenRef },
          });
  const config = connector.configSchema.parse(raw);
  const byNumber = name !== 'rest-json';
  const ctx = (since: string | null): ConnectorContext => ({
    fetch: globalThis.fetch,
    secrets: async () => CONTRACT_SECRET,
    since,
  });
  const firstPage = () => connector.fetchPage(config, null, ctx(null));
  return {
    name,
    connector,
    config,
    ctx,
    async truth() {
      const truth = fake.truth();
      const invalid = new Set(truth.invalidIds);
      return new Map(
        truth.entities
          .filter((e) => !invalid.has(e.id))
          .map((e) => [byNumber ? String(e.number) : e.id, e.updatedAt]),
      );
    },
    async edit(round) {
      // One entity the run has read (low numbers are oldest), one it has not, and a new one.
      fake.control.touch([1 + round, 30 + round]);
      fake.control.add(1);
    },
    async throttled() {
      const answers: ThrottleAnswer[] = [];
      fake.control.setProfile({ rate429: 1, retryAfterSeconds: 7, maxConsecutiveFailures: 100 });
      answers.push({ name: '429 with Retry-After', error: await failure(firstPage), asksForWait: true });
      fake.control.setProfile({
        githubRateLimitEvery: 1,
        rateLimitWindowSeconds: 30,
        maxConsecutiveFailures: 100,
      });
      answers.push({ name: 'rate-limit window', error: await failure(firstPage), asksForWait: true });
      fake.control.setProfile('none');
      return answers;
    },
    async refused() {
      fake.control.setProfile({ forceStatus: 401 });
      const error = await failure(firstPage);
      fake.control.setProfile('none');
      return error;
    },
    stop: () => fake.stop(),
  };
}

/** A subject over a bucket on the emulator's S3, read with `client` (credentials: the contract secret). */
export async function s3Subject(client: S3Client, bucket: string): Promise<Subject> {
  await createBucket(client, bucket);
  for (let n = 1; n <= 45; n++) await putObject(client, bucket, objectKey('c/', n * 10), { n });
  // Let the uploads' second pass: S3 times are whole seconds.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const faults = injectS3Faults(client);
  const connector = getConnector('s3-objects');
  const config = connector.configSchema.parse({
    bucket,
    prefix: 'c/',
    pageSize: 10,
    jsonBodies: { maxBytes: 1_000 },
  });
  const ctx = (since: string | null): ConnectorContext => ({
    fetch: globalThis.fetch,
    secrets: async () => CONTRACT_SECRET,
    since,
    aws: { s3: () => client },
  });
  let added = 0;
  const firstPage = () => connector.fetchPage(config, null, ctx(null));
  return {
    name: 's3-objects',
    connector,
    config,
    ctx,
    async truth() {
      const truth = new Map<string, string>();
      let after: string | undefined;
      for (;;) {
        const out = await client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: 'c/', StartAfter: after }),
        );
        for (const o of out.Contents ?? []) {
          truth.set(o.Key!, o.LastModified!.toISOString());
        }
        if (!out.IsTruncated) return truth;
        after = out.Contents!.at(-1)!.Key!;
      }
    },
    async edit(round) {
      // A key before the position, one after it, a new key before it, and a deleted key.
      await putObject(client, bucket, objectKey('c/', 10 + round * 10), { round, edited: true });
      await putObject(client, bucket, objectKey('c/', 400 + round * 10), { round, edited: true });
      await putObject(client, bucket, objectKey('c/', 15 + round * 10), { added: ++added });
      await deleteObject(client, bucket, objectKey('c/', 200 + round * 10));
    },
    async throttled() {
      faults.failNext('ListObjectsV2Command', {
        kind: 'error',
        status: 503,
        code: 'SlowDown',
        message: 'Please reduce your request rate.',
      });
      return [{ name: 'SlowDown', error: await failure(firstPage), asksForWait: false }];
    },
    async refused() {
      faults.failNext('ListObjectsV2Command', {
        kind: 'error',
        status: 403,
        code: 'AccessDenied',
        message: 'Access Denied',
      });
      return failure(firstPage);
    },
    stop: async () => undefined,
  };
}
