import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { Connector, ConnectorContext, TimeWindow } from '../../lib/connectors/contract.js';
import { getConnector } from '../../lib/connectors/registry.js';
import { type FakeSource, fakeRestConfig, startFakeSource } from '../../tools/fake-source/index.js';
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
  /** True when the connector can split this stream into windows (`planWindows` finds boundaries). */
  readonly splits: boolean;
  ctx(since: string | null, window?: TimeWindow): ConnectorContext;
  /** Live, valid entities: id → version, as the connector names them. */
  truth(): Promise<Map<string, string>>;
  /** Changes the source: edits entities already read and not yet read, adds new ones. */
  edit(round: number): Promise<void>;
  /** The source's own throttling answers, as the connector's fetchPage throws them. */
  throttled(): Promise<ThrottleAnswer[]>;
  /** The source's own throttling answers, as `request` (any call of the connector) throws them. */
  throttledBy(request: () => Promise<unknown>): Promise<ThrottleAnswer[]>;
  /** Edits these entities (by number) in one bulk edit: one shared modification time, a tie group. */
  tie(numbers: readonly number[]): Promise<void>;
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

/**
 * The fake source's API shapes under contract; `rest-json` three times: over a stable cursor
 * (the default fake config), and keyed by `since` over page numbers and over a plain cursor.
 */
export const HTTP_SHAPES = [
  'github-issues',
  'gitlab-issues',
  'rest-json',
  'rest-json (keyed, page)',
  'rest-json (keyed, cursor)',
] as const;
export type HttpShape = (typeof HTTP_SHAPES)[number];

function httpConfig(name: HttpShape, url: string, tokenRef: string): Record<string, unknown> {
  const auth = { header: 'Authorization', prefix: 'Bearer ', secretRef: tokenRef };
  switch (name) {
    case 'github-issues':
      return { owner: 'octo', repo: 'contract', baseUrl: url, perPage: 10, tokenRef };
    case 'gitlab-issues':
      return { project: 'acme/contract', baseUrl: `${url}/api/v4`, perPage: 10, tokenRef };
    case 'rest-json':
      return fakeRestConfig(url, { pageSize: 10, auth });
    case 'rest-json (keyed, page)':
      return fakeRestConfig(url, {
        url: `${url}/records-paged`,
        pageSize: 10,
        auth,
        pagination: { type: 'page' },
      });
    case 'rest-json (keyed, cursor)':
      return fakeRestConfig(url, {
        pageSize: 10,
        auth,
        pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor', stable: false },
      });
  }
}

/** A subject over the fake source (`entities` at start, default 45; 10 per page). */
export async function httpSubject(name: HttpShape, seed: number, entities = 45): Promise<Subject> {
  const fake: FakeSource = await startFakeSource({ entities, seed, latencyMs: 0 });
  const connectorName = name.split(' ')[0]!;
  const connector = getConnector(connectorName);
  const config = connector.configSchema.parse(httpConfig(name, fake.url, 'ssm:/harvester/contract/token'));
  const byNumber = connectorName !== 'rest-json';
  const ctx = (since: string | null, window?: TimeWindow): ConnectorContext => ({
    fetch: globalThis.fetch,
    secrets: async () => CONTRACT_SECRET,
    since,
    ...(window === undefined ? {} : { window }),
  });
  const firstPage = () => connector.fetchPage(config, null, ctx(null));
  const throttledBy = async (request: () => Promise<unknown>): Promise<ThrottleAnswer[]> => {
    const answers: ThrottleAnswer[] = [];
    fake.control.setProfile({ rate429: 1, retryAfterSeconds: 7, maxConsecutiveFailures: 100 });
    answers.push({ name: '429 with Retry-After', error: await failure(request), asksForWait: true });
    fake.control.setProfile({
      githubRateLimitEvery: 1,
      rateLimitWindowSeconds: 30,
      maxConsecutiveFailures: 100,
    });
    answers.push({ name: 'rate-limit window', error: await failure(request), asksForWait: true });
    fake.control.setProfile('none');
    return answers;
  };
  return {
    name,
    connector,
    config,
    splits: true,
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
    throttled: () => throttledBy(firstPage),
    throttledBy,
    async tie(numbers) {
      fake.control.touch([...numbers], { tied: true });
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
  const throttledBy = async (request: () => Promise<unknown>): Promise<ThrottleAnswer[]> => {
    faults.failNext('ListObjectsV2Command', {
      kind: 'error',
      status: 503,
      code: 'SlowDown',
      message: 'Please reduce your request rate.',
    });
    return [{ name: 'SlowDown', error: await failure(request), asksForWait: false }];
  };
  return {
    name: 's3-objects',
    connector,
    config,
    splits: false,
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
    throttled: () => throttledBy(firstPage),
    throttledBy,
    async tie() {
      throw new Error('S3 stamps every write itself: a bulk edit cannot share one modification time');
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
