import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REGION, testEndpoint } from '../support/aws.js';
import { latest, run } from './streams.js';
import { CONTRACT_SECRET, HTTP_SHAPES, httpSubject, type Subject, s3Subject } from './subjects.js';

/**
 * The contract every connector passes (README: connector authoring guide). Each check runs the
 * connector's own fetchPage against a live source — the fake source's API shapes, the emulator's
 * S3 — exactly as the engine calls it (cursor in, cursor out, `since` for incremental runs):
 *
 * 1. pagination reaches the end and delivers every entity once;
 * 2. a resume from each checkpoint (cursor) equals the uninterrupted run;
 * 3. edits during a run lose nothing: the run, then one incremental run from the watermark the
 *    connector justified, hold every live entity at its latest version;
 * 4. the source's own throttling answers classify as transient (with the wait it asked for);
 * 5. the secret the connector sends is never in an error it throws nor in a classification reason.
 */

const NAMES = [...HTTP_SHAPES, 's3-objects'] as const;
type Name = (typeof NAMES)[number];

let s3: S3Client;
let seed = 0;
const subjects: Subject[] = [];

beforeAll(() => {
  s3 = new S3Client({
    region: TEST_REGION,
    endpoint: testEndpoint(),
    forcePathStyle: true,
    maxAttempts: 1,
    // The contract secret as the AWS secret key: S3 sources must not leak their credentials either.
    credentials: { accessKeyId: 'contract', secretAccessKey: CONTRACT_SECRET },
  });
});
afterAll(async () => {
  await Promise.all(subjects.map((s) => s.stop()));
  s3.destroy();
});

async function subject(name: Name): Promise<Subject> {
  seed += 1;
  const made =
    name === 's3-objects'
      ? await s3Subject(s3, `contract-${process.pid}-${seed}-${Date.now().toString(36)}`)
      : await httpSubject(name, 7_000 + seed);
  subjects.push(made);
  return made;
}

describe.each(NAMES)('connector contract: %s', (name) => {
  it('pagination reaches the end and delivers every entity once', async () => {
    const s = await subject(name);
    const full = await run(s);
    const ids = full.entities.map(([id]) => id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(full.pages.length).toBeGreaterThan(3);
    expect(new Map(full.entities)).toEqual(await s.truth());
  });

  it('a resume from each checkpoint equals the uninterrupted run', async () => {
    const s = await subject(name);
    const whole = await run(s);
    for (let k = 1; k < whole.cursors.length; k++) {
      const resumed = await run(s, { from: whole.cursors[k] });
      const before = whole.pages.slice(0, k).flatMap((p) => p.items);
      expect([...before, ...resumed.pages.flatMap((p) => p.items)]).toEqual(
        whole.pages.flatMap((p) => p.items),
      );
      expect(resumed.cursors).toEqual(whole.cursors.slice(k));
      expect(resumed.watermark).toBe(whole.watermark);
    }
  });

  it('edits during a run lose nothing: the run and one incremental run from its watermark hold every live entity at its latest version', async () => {
    const s = await subject(name);
    const raced = await run(s, { edit: true });
    const quiet = await run(s, { since: raced.watermark });
    const truth = await s.truth();
    const stored = latest(raced, quiet);
    const missing = [...truth].filter(([id, version]) => stored.get(id) !== version);
    expect(missing).toEqual([]);
    expect(raced.watermark).not.toBeNull();
  });

  it('classifies its source’s own throttling answers as transient, with the wait the source named', async () => {
    const s = await subject(name);
    const answers = await s.throttled();
    expect(answers.length).toBeGreaterThan(0);
    for (const answer of answers) {
      const verdict = s.connector.classify(answer.error, Date.now());
      expect({ answer: answer.name, errorClass: verdict.errorClass }).toEqual({
        answer: answer.name,
        errorClass: 'transient',
      });
      if (answer.asksForWait) expect(verdict.waitMs ?? 0).toBeGreaterThan(0);
    }
  });

  it('never puts the secret it sends in an error or a classification reason', async () => {
    const s = await subject(name);
    const refused = await s.refused();
    const verdict = s.connector.classify(refused, Date.now());
    const error = refused as Error & Record<string, unknown>;
    const exposed = [
      String(refused),
      error.stack ?? '',
      JSON.stringify({ ...error, message: error.message }),
      verdict.reason,
      ...s.connector.classify(refused, Date.now()).reason,
    ].join('\n');
    expect(exposed).not.toContain(CONTRACT_SECRET);
    expect(verdict.errorClass).toBe('permanent');
  });
});
