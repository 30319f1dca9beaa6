import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { StepPoint } from '../../lib/engine/index.js';
import type { RunMode } from '../../lib/run/model.js';
import { putSource } from '../support/harness.js';
import { createBucket, deleteObject, objectKey, putObject } from '../support/s3.js';
import { injectS3Faults, type S3FaultInjector } from '../support/s3-faults.js';
import type { StepContext } from './hooks.js';
import { backlogViolation, INVARIANT } from './invariants.js';
import type { RunRecord } from './supervisor.js';
import type { Trial } from './trial-faults.js';

/** How a trial starts and watches one run (trial.ts's `supervisedRun`), with step hooks. */
export type SupervisedStepRun = (
  trial: Trial,
  mode: RunMode,
  faulty: boolean,
  onStep?: (point: StepPoint, context: StepContext) => Promise<void>,
) => Promise<{ record: RunRecord; stallFaults: number }>;

const injectors = new WeakMap<S3Client, S3FaultInjector>();
const SLOW_DOWN = {
  kind: 'error',
  status: 503,
  code: 'SlowDown',
  message: 'Please reduce your request rate.',
} as const;
const some = (keys: readonly string[]) => keys.slice(0, 8).join(', ');

/**
 * The `s3-objects` trial: a bucket on the emulator's S3, an incremental run under the plan's
 * faults (crashes, zombie, kill, duplicate deliveries, `SlowDown` answers) while objects are
 * edited, added and deleted after its page commits — keys before and after its position — then a
 * quiet incremental run: every object must be stored at its latest version (LastModified#ETag).
 * A reconciliation then tombstones exactly the deleted objects.
 */
export async function s3Trial(trial: Trial, run: SupervisedStepRun): Promise<string[]> {
  const { env, plan, sourceId, rng } = trial;
  const live = plan.live;
  if (!live || !env.deps.connectorAws) throw new Error('an S3 trial needs a live plan and S3 clients');
  const client = env.deps.connectorAws.s3();
  const faults = injectors.get(client) ?? injectS3Faults(client);
  injectors.set(client, faults);
  faults.clear();
  const violations: string[] = [];
  const fail = (invariant: string, label: string, detail: string) =>
    violations.push(`${invariant} (${label}): ${detail}`);

  const bucket = `chaos-${plan.seed}-${Date.now().toString(36)}`.slice(0, 63);
  await createBucket(client, bucket);
  const keys = Array.from({ length: plan.entities }, (_, i) => objectKey('o/', (i + 1) * 10));
  for (const key of keys) await putObject(client, bucket, key, { key, v: 0 });
  await putSource(env.deps, sourceId, 's3-objects', {
    bucket,
    pageSize: plan.pageSize,
    jsonBodies: { maxBytes: 2_000 },
    clockSkewMarginSeconds: 0,
  });
  if (plan.rate429 > 0) {
    faults.failNext('ListObjectsV2Command', SLOW_DOWN, 2);
    faults.failNext('GetObjectCommand', SLOW_DOWN, 3);
  }

  const deleted: string[] = [];
  let added = 0;
  let touched = 0;
  const edit = async (point: StepPoint) => {
    if (point !== 'afterCommit') return;
    const alive = keys.filter((k) => !deleted.includes(k));
    for (const key of rng.sample(alive, live.touchesPerPage)) {
      touched += 1;
      await putObject(client, bucket, key, { key, v: Date.now() });
    }
    for (let i = 0; i < live.addsPerPage; i++) {
      const key = objectKey('o/', rng.int(1, plan.entities * 10), `-${++added}.json`);
      keys.push(key);
      await putObject(client, bucket, key, { key, v: 0 });
    }
    for (const key of rng.sample(alive, live.deletesPerPage)) {
      deleted.push(key);
      await deleteObject(client, bucket, key);
    }
  };

  const ended = (label: string, record: RunRecord) => {
    if (record.run.state !== 'succeeded')
      fail(INVARIANT.ended, label, `ended ${record.run.state} (${JSON.stringify(record.run.failure)})`);
    const backlog = backlogViolation(record);
    if (backlog) fail(INVARIANT.stall, label, backlog);
  };
  const raced = await run(trial, 'incremental', true, edit);
  trial.log(
    `s3: edits during the run: ${touched} edited, ${added} added, ${deleted.length} deleted; ${faults.requests.filter((r) => r.faulted).length} SlowDown answers`,
  );
  ended('raced incremental run', raced.record);
  const quiet = await run(trial, 'incremental', false);
  ended('quiet incremental run', quiet.record);

  const truth = await bucketTruth(client, bucket);
  const stored = new Map((await env.deps.items.listAll(sourceId)).map((item) => [item.entityId, item]));
  const missing = [...truth.keys()].filter((key) => !stored.has(key));
  const stale = [...truth].filter(
    ([key, version]) => stored.has(key) && storedVersion(stored.get(key)!) !== version,
  );
  if (missing.length > 0)
    fail(INVARIANT.lost, 'after a raced and a quiet incremental run', `${missing.length}: ${some(missing)}`);
  if (stale.length > 0)
    fail(
      INVARIANT.older,
      'after a raced and a quiet incremental run',
      `${stale.length}: ${some(stale.map(([k]) => k))}`,
    );

  const reconciliation = await run(trial, 'reconciliation', false);
  ended('reconciliation', reconciliation.record);
  const after = await env.deps.items.listAll(sourceId);
  const tombstoned = after.filter((i) => i.tombstonedAt !== undefined).map((i) => i.entityId);
  const wrongly = tombstoned.filter((key) => truth.has(key));
  const storedDeleted = deleted.filter((key) => stored.has(key));
  const notTombstoned = storedDeleted.filter((key) => !tombstoned.includes(key));
  if (wrongly.length > 0 || notTombstoned.length > 0)
    fail(
      'exactly the deleted tombstoned',
      'reconciliation',
      `live tombstoned: ${some(wrongly)}; deleted not tombstoned: ${some(notTombstoned)}`,
    );
  const source = await env.deps.sources.require(sourceId);
  if (source.activeRunId !== null) fail(INVARIANT.lock, 's3 trial', `locked by ${source.activeRunId}`);
  faults.clear();
  return violations;
}

/** What a stored object holds: its version (LastModified) and the ETag of its content. */
function storedVersion(item: { version: string; data: Record<string, unknown> }): string {
  return `${item.version}#${String(item.data.etag)}`;
}

/** Every object of the bucket: key → LastModified#ETag (the connector's version and the content's ETag). */
async function bucketTruth(client: S3Client, bucket: string): Promise<Map<string, string>> {
  const truth = new Map<string, string>();
  let after: string | undefined;
  for (;;) {
    const out = await client.send(new ListObjectsV2Command({ Bucket: bucket, StartAfter: after }));
    for (const o of out.Contents ?? [])
      truth.set(o.Key!, `${o.LastModified!.toISOString()}#${o.ETag!.replace(/"/g, '')}`);
    if (!out.IsTruncated) return truth;
    after = out.Contents!.at(-1)!.Key!;
  }
}
