import { describe, expect, it } from 'vitest';
import type { FaultProfile, LiveOptions } from '../../tools/fake-source/index.js';
import { putSource, useEngineWithFakes } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';
import { sourceOfShape } from '../support/shapes.js';

/**
 * The `gitlab-issues` connector through the whole engine against the fake source's GitLab shape:
 * keyset reading under live edits, GitLab's throttling answers, totals from `X-Total`.
 */

const { engine, startFake, runToEnd } = useEngineWithFakes('gitlab', { heartbeatIntervalMs: 500 });
let counter = 0;

async function gitlabSource(entities: number, options: { live?: LiveOptions; profile?: FaultProfile } = {}) {
  const fake = await startFake({ entities, seed: 1_400 + counter, latencyMs: 0, ...options });
  const sourceId = `gitlab-${++counter}`;
  const { connector, config } = sourceOfShape(fake, 'gitlab');
  await putSource(engine.deps, sourceId, connector, config);
  return { fake, sourceId };
}

describe('gitlab-issues against the fake GitLab', () => {
  it('a full run stores every issue by iid at its updated_at', async () => {
    const { fake, sourceId } = await gitlabSource(130);
    const run = await runToEnd(sourceId, 'full');
    expect(run.state).toBe('succeeded');
    expect(run.progress.processed + run.errorCount).toBe(130);
    expect(run.progress.total).toBe(run.progress.processed);
    const comparison = await compareWithTruth(engine.deps, sourceId, fake, 'github');
    expect(comparison).toMatchObject({ missing: [], stale: [] });
    const item = await engine.deps.items.get(sourceId, '7');
    expect(item?.data).toMatchObject({
      iid: 7,
      project_id: expect.any(Number),
      state: expect.stringMatching(/opened|closed/),
    });
  });

  it('an incremental run raced by edits, then a quiet one, stores every live issue at its latest version', async () => {
    const { fake, sourceId } = await gitlabSource(300, { live: { touchesPerPage: 2, addsPerPage: 1 } });
    const raced = await runToEnd(sourceId, 'incremental');
    fake.control.setLive(null);
    const quiet = await runToEnd(sourceId, 'incremental');

    expect(raced.state).toBe('succeeded');
    expect(quiet.state).toBe('succeeded');
    expect(fake.control.liveHistory().touched.length).toBeGreaterThan(20);
    const comparison = await compareWithTruth(engine.deps, sourceId, fake, 'github');
    expect(comparison.missing).toEqual([]);
    expect(comparison.stale).toEqual([]);
  }, 150_000);

  it('waits out GitLab’s throttling (429 Retry-After, 403 with RateLimit headers) and loses nothing', async () => {
    const { fake, sourceId } = await gitlabSource(200, {
      profile: { rate429: 0.15, retryAfterSeconds: 1, githubRateLimitEvery: 7, rateLimitWindowSeconds: 1 },
    });
    const run = await runToEnd(sourceId, 'full');

    expect(run.state).toBe('succeeded');
    const stats = fake.stats();
    expect(stats.byStatus['429']).toBeGreaterThan(0);
    expect(stats.byStatus['403']).toBeGreaterThan(0);
    const deadPages = (await engine.deps.deadLetters.listAll(sourceId)).filter((d) => d.kind === 'page');
    expect(deadPages).toEqual([]);
    const comparison = await compareWithTruth(engine.deps, sourceId, fake, 'github');
    expect(comparison).toMatchObject({ missing: [], stale: [] });
  }, 120_000);
});
