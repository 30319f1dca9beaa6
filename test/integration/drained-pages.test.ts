import { beforeAll, describe, expect, it } from 'vitest';
import { RELIABILITY } from '../../lib/config/constants.js';
import type { EngineDeps } from '../../lib/engine/index.js';
import { drainDeadMessage, processPage, startRun } from '../../lib/engine/index.js';
import type { PageMessage } from '../../lib/queue/page-message.js';
import { type FakeSource, fakeRestConfig } from '../../tools/fake-source/index.js';
import { putSource, useEngineWithFakes } from '../support/harness.js';
import { takePageMessages } from '../support/page-messages.js';

/*
 * Pages the page queue gave up on (a worker that fails on every delivery of them: SQS moves each
 * to the page DLQ after maxReceiveCount) are skipped by the drain where the next page is known
 * without the response (page numbers). They count toward the same limit as pages the worker
 * failed for good: three in a row end the run, one between good pages does not.
 */

let fake: FakeSource;
const { engine, startFake } = useEngineWithFakes('drainedrow', { workers: 0 });
beforeAll(async () => {
  fake = await startFake({ entities: 100, seed: 41 });
});

async function takeMessages(runId: string): Promise<PageMessage[]> {
  return (await takePageMessages(engine.aws)).filter((m) => m.runId === runId);
}

/** The engine with a worker bug on the given pages of `runId`, after their items were loaded. */
function poisoned(runId: string, pages: ReadonlySet<number>): EngineDeps {
  return {
    ...engine.deps,
    hooks: {
      at(point, context) {
        if (point === 'afterLoad' && context.runId === runId && pages.has(context.page ?? -1))
          throw new Error('worker bug on this page');
      },
    },
  };
}

async function pagedSource(sourceId: string): Promise<void> {
  // Page numbers read by position (not keyed: no `ordered` stream), so the next page is known
  // without the response.
  const config = fakeRestConfig(fake.url, {
    url: `${fake.url}/records-paged`,
    pageSize: 10,
    pagination: { type: 'page' },
  });
  delete config.ordered;
  await putSource(engine.deps, sourceId, 'rest-json', config);
}

/** Delivers the run's pages by hand, each poisoned page to the drain as SQS would; returns the ended run. */
async function deliver(runId: string, bad: ReadonlySet<number>) {
  const deps = poisoned(runId, bad);
  for (let round = 0; round < 40; round++) {
    const run = await engine.deps.runs.require(runId);
    if (run.state === 'succeeded' || run.state === 'failed') return run;
    for (const message of await takeMessages(runId)) {
      if (!bad.has(message.page)) {
        await processPage(deps, message);
        continue;
      }
      await expect(processPage(deps, message)).rejects.toThrow('worker bug');
      await drainDeadMessage(engine.deps, JSON.stringify(message), RELIABILITY.maxReceiveCount);
    }
  }
  throw new Error(`run ${runId} did not end`);
}

describe('pages the page queue gave up on, in a page-numbered run', () => {
  it('end the run `pages_failing` at the third in a row, each a page dead letter', async () => {
    const sourceId = 'drained-row';
    await pagedSource(sourceId);
    const { runId } = await startRun(engine.deps, { sourceId, mode: 'full' });

    const run = await deliver(runId, new Set([3, 4, 5, 6, 7]));

    expect(run.state).toBe('failed');
    expect(run.failure?.reason).toBe('pages_failing');
    expect(run.failure?.message).toContain('pages 3–5');
    const pages = (await engine.deps.deadLetters.listAll(sourceId)).filter((e) => e.kind === 'page');
    expect(pages.map((e) => e.page).sort()).toEqual([3, 4, 5]);
  });

  it('skip one between good pages and read on to the end', async () => {
    const sourceId = 'drained-one';
    await pagedSource(sourceId);
    const { runId } = await startRun(engine.deps, { sourceId, mode: 'full' });

    const run = await deliver(runId, new Set([3, 5, 6]));

    expect(run.state).toBe('succeeded');
    expect(run.progress.processed).toBe(70);
  });
});
