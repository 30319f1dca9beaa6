import { describe, expect, it } from 'vitest';
import type { EngineDeps } from '../../lib/engine/deps.js';
import { tell, tellPages } from '../../lib/engine/run/story.js';
import type { RunEventInput } from '../../lib/run/run-events.js';

/** What `tell` does with the story store's answer: it never stops the run. */
function depsWith(append: (runId: string, event: RunEventInput) => Promise<unknown>) {
  const counted: { name: string; value?: number; dimension?: unknown }[] = [];
  const warned: { message: string; fields: unknown }[] = [];
  const deps = {
    story: { append },
    metrics: {
      count: (name: string, value?: number, dimension?: unknown) => counted.push({ name, value, dimension }),
    },
    logger: {
      debug: () => {},
      warn: (message: string, fields: unknown) => warned.push({ message, fields }),
    },
    clock: { now: () => 1_800_000_000_000 },
  } as unknown as EngineDeps;
  return { deps, counted, warned };
}

const run = { runId: '01JD5W9Q3R8V2K7T6Y4X1Z0ABC', sourceId: 'acme', epoch: 3 };
const started: RunEventInput = {
  type: 'started',
  epoch: 1,
  at: 0,
  detail: { mode: 'full', trigger: 'api', verdict: 'fresh_start' },
};

describe('telling a run event', () => {
  it('logs and counts an event the store could not write, by type, and does not throw', async () => {
    const { deps, counted, warned } = depsWith(async () => {
      throw new Error('ProvisionedThroughputExceededException');
    });
    await expect(tell(deps, run, started)).resolves.toBeUndefined();
    expect(counted).toEqual([
      { name: 'RunEventsLost', value: 1, dimension: { name: 'EventType', value: 'started' } },
    ]);
    expect(warned[0]?.fields).toMatchObject({
      runId: run.runId,
      sourceId: 'acme',
      eventType: 'started',
      epoch: 1,
    });
  });

  it('tells pages only at every 10th page of a chain, with the chain it is', async () => {
    const told: RunEventInput[] = [];
    const { deps } = depsWith(async (_runId, event) => {
      told.push(event);
      return { kind: 'append', seq: told.length };
    });
    for (const page of [1, 9, 10, 11, 19, 20])
      await tellPages(deps, run, { partition: 2, page, processed: page * 5 });
    expect(
      told.map((e) => e.type === 'pages' && [e.detail.partition, e.detail.throughPage, e.detail.processed]),
    ).toEqual([
      [2, 10, 50],
      [2, 20, 100],
    ]);
    expect(told.every((e) => e.epoch === 3)).toBe(true);
  });
});
