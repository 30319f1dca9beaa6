import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import type { SyncRun } from '../../lib/run/model.js';
import type { ChainEnding } from '../../lib/store/chain-commit.js';
import { type ChainRef, chainKey } from '../../lib/store/chain-item.js';
import { ChainStore } from '../../lib/store/chains.js';
import { DuplicatePageError, RunFencedError, StoreError } from '../../lib/store/errors.js';
import type { RunLifecycle } from '../../lib/store/lifecycle.js';
import { type Fence, SyncRunStore } from '../../lib/store/sync-runs.js';
import { type ChainFixture, T0, useChainFixture } from '../support/chain-fixture.js';
import { withDynamoFaults } from '../support/dynamo-faults.js';

/**
 * Late and stale chain writes, on the store directly: a claim or a send confirmation for a page
 * the chain has moved past, two deciders arming one tail pass, fences built from a read the run
 * has since outgrown, and a chain's end arriving at a run that cannot take it. Each test is the
 * scenario one condition of the chain store defends (see docs/testing.md, "Condition mutants").
 */

let fx: ChainFixture;
let runs: SyncRunStore;
let chains: ChainStore;
let lifecycle: RunLifecycle;

useChainFixture('chainstore', (f) => {
  fx = f;
  ({ runs, chains, lifecycle } = f);
});

const queuedRun = () => fx.queuedRun();
const plannedRun = () => fx.plannedRun();
const commit = (ref: ChainRef, page: number, ending?: ChainEnding) => fx.commit(ref, page, ending);
const forceChain = (ref: ChainRef, fields: Record<string, unknown>) => fx.forceChain(ref, fields);

/** A fence of a run at epoch 1 that resumes from the checkpoint. */
function fence(
  runId: string,
  partitions: number,
  rearm: Fence['rearm'],
  countRestart = true,
): Promise<number> {
  return runs.fence({
    runId,
    epoch: 1,
    partitions,
    resume: { reason: 'resumed', from: 'checkpoint', at: T0 + 100 },
    reset: false,
    rearm,
    countRestart,
    now: T0 + 100,
  });
}

/** The two kinds of page chain, each at page 2 with page 1 committed: the run's own, and a partition's. */
const KINDS = [
  {
    kind: "the run's own chain",
    partitions: 0,
    async chainAtPage2(): Promise<{ run: SyncRun; ref: ChainRef }> {
      const run = await queuedRun();
      await runs.start(run.runId, 1, T0 + 1);
      const ref = { runId: run.runId };
      await chains.claim(ref, 1, 1, T0 + 1);
      await commit(ref, 1);
      return { run, ref };
    },
    /** The fence's re-arming of the run's chains other than the one under test. */
    others: [] as Fence['rearm'],
  },
  {
    kind: "a partition's chain",
    partitions: 2,
    async chainAtPage2(): Promise<{ run: SyncRun; ref: ChainRef }> {
      const run = await plannedRun();
      const ref = { runId: run.runId, partition: 0 };
      await chains.claim(ref, 1, 1, T0 + 3);
      await commit(ref, 1);
      return { run, ref };
    },
    others: [{ partition: 1, page: 1 }] as Fence['rearm'],
  },
] as const;

describe.each(KINDS)('$kind', ({ partitions, chainAtPage2, others }) => {
  it('refuses a claim of the page after its last: a chain read to its end has no page due', async () => {
    const { ref } = await chainAtPage2();
    await chains.claim(ref, 1, 2, T0 + 20);
    await commit(ref, 2, 'done');
    const ended = await chains.get(ref);

    // A late delivery naming the page the chain would have read next.
    await expect(chains.claim(ref, 1, 3, T0 + 30)).rejects.toBeInstanceOf(DuplicatePageError);
    expect(await chains.get(ref)).toEqual(ended);
  });

  it('confirms no send and notes no failed send once the page was taken', async () => {
    const { ref } = await chainAtPage2();
    await chains.claim(ref, 1, 2, T0 + 20);

    expect(await chains.confirmSent(ref, 1, 2, T0 + 21)).toBe(false);
    expect(await chains.noteSendFailed(ref, 1, 2, T0 + 21)).toBe(false);
    expect((await chains.get(ref))?.handoff).toBeNull();
  });

  it("neither confirms nor renews a handoff that names another page than the chain's next", async () => {
    const { ref } = await chainAtPage2();
    // As a fence re-arming the wrong page would leave it: the chain expects 2, the handoff says 3.
    await forceChain(ref, { handoff: { page: 3, at: T0 + 50, sentAt: null } });

    for (const page of [2, 3]) {
      expect(await chains.confirmSent(ref, 1, page, T0 + 51)).toBe(false);
      expect(await chains.noteSendFailed(ref, 1, page, T0 + 51)).toBe(false);
      expect(await chains.renewHandoff(ref, 1, page, T0 + 50, T0 + 51)).toBe(false);
    }
    expect((await chains.get(ref))?.handoff).toEqual({ page: 3, at: T0 + 50, sentAt: null });
  });

  it('refuses the end of a chain the fence did not move: its counts are not added at the old epoch', async () => {
    const { run, ref } = await chainAtPage2();
    await fence(run.runId, partitions, others);
    const before = await runs.require(run.runId);

    await expect(commit(ref, 2, 'done')).rejects.toBeInstanceOf(RunFencedError);
    const after = await runs.require(run.runId);
    expect(after.epoch).toBe(2);
    expect(after.progress).toEqual(before.progress);
    expect((await chains.get(ref))?.state).toBe('running');
  });

  it('refuses a fence that re-arms a chain the run does not have, and creates none', async () => {
    const { run } = await chainAtPage2();
    const stray = { runId: run.runId, partition: partitions };
    const all: Fence['rearm'] = partitions ? [{ partition: 0, page: 2 }, ...others] : [{ page: 2 }];

    await expect(
      fence(run.runId, partitions, [...all, { partition: partitions, page: 1 }]),
    ).rejects.toBeInstanceOf(StoreError);
    expect(await chains.get(stray)).toBeUndefined();
    expect((await runs.require(run.runId)).epoch).toBe(1);
  });

  it('refuses a fence that counts the partitions wrong: it would leave a chain at the old epoch', async () => {
    const { run } = await chainAtPage2();

    await expect(fence(run.runId, partitions + 1, [])).rejects.toBeInstanceOf(StoreError);
    expect((await runs.require(run.runId)).epoch).toBe(1);
  });

  it('ends no chain item into being: a run whose chain item is missing is not ended past it', async () => {
    const { run, ref } = await chainAtPage2();
    await fx.aws.clients.doc.send(
      new DeleteCommand({ TableName: fx.aws.names.syncRunsTable, Key: chainKey(ref) }),
    );

    await expect(lifecycle.cancel(run.runId, T0 + 40)).rejects.toThrow();
    expect(await chains.get(ref)).toBeUndefined();
  });
});

describe('the open window waiting for its tail pass', () => {
  async function idleWindow(): Promise<{ run: SyncRun; idle: ChainRef }> {
    const run = await plannedRun();
    const idle = { runId: run.runId, partition: 1 };
    await chains.claim(idle, 1, 1, T0 + 3);
    await commit(idle, 1, 'idle');
    return { run, idle };
  }

  it('takes no page until its tail pass is armed', async () => {
    const { idle } = await idleWindow();

    await expect(chains.claim(idle, 1, 2, T0 + 20)).rejects.toBeInstanceOf(DuplicatePageError);
    expect((await chains.get(idle))?.state).toBe('idle');
  });

  it('is armed by one of two deciders, and only while idle', async () => {
    const { run, idle } = await idleWindow();

    const armed = await Promise.all([
      chains.armTail(idle, 1, 'v-9', 2, T0 + 20),
      chains.armTail(idle, 1, 'v-9', 2, T0 + 21),
    ]);

    expect(armed.filter(Boolean)).toHaveLength(1);
    expect(await chains.get(idle)).toMatchObject({ state: 'running', tailFrom: 'v-9', nextPage: 2 });
    expect(await chains.armTail({ runId: run.runId, partition: 0 }, 1, null, 1, T0 + 22)).toBe(false);
    await chains.claim(idle, 1, 2, T0 + 23);
  });
});

describe('a run that is not running', () => {
  it('takes no chain end while queued: its last page is refused before the run started', async () => {
    const run = await queuedRun();
    const ref = { runId: run.runId };
    await chains.claim(ref, 1, 1, T0 + 1);

    await expect(commit(ref, 1, 'done')).rejects.toBeInstanceOf(StoreError);
    expect((await runs.require(run.runId)).progress.processed).toBe(0);
  });

  it('is fenced while still queued when its first message was lost', async () => {
    const run = await queuedRun();

    expect(await fence(run.runId, 0, [{ page: 1 }], false)).toBe(2);
    expect(await runs.require(run.runId)).toMatchObject({ epoch: 2, state: 'running', restarts: 0 });
  });

  it("refuses a fence read before the run's plan: the plan's chains would stay at the old epoch", async () => {
    const run = await plannedRun();

    await expect(fence(run.runId, 0, [{ page: 2 }])).rejects.toBeInstanceOf(StoreError);
    expect((await runs.require(run.runId)).epoch).toBe(1);
  });
});

describe('a chain write DynamoDB applied and answered with a 500', () => {
  /** The fixture's chains through the fault layer, losing the answer of the next single-item write. */
  async function losingAnswer(maxAttempts?: number) {
    const faulty = await withDynamoFaults(fx.aws, { seed: 3 }, maxAttempts);
    const lossy = new ChainStore(
      faulty.clients.doc,
      new SyncRunStore(faulty.clients.doc, fx.aws.names.syncRunsTable),
    );
    faulty.faults.set({ seed: 3, lostAnswer: 1, limit: 1 });
    return {
      lossy,
      faults: faulty.faults,
      close() {
        destroyAwsClients(faulty.clients);
        faulty.faults.destroy();
      },
    };
  }

  it.each([
    ['the SDK sent it again and the copy was refused', undefined],
    ['no send was left to the SDK and the 500 came through', 1],
  ])('is a commit all the same when %s', async (_case, maxAttempts) => {
    const { ref } = await KINDS[1].chainAtPage2();
    await chains.claim(ref, 1, 2, T0 + 20);
    const { lossy, faults, close } = await losingAnswer(maxAttempts);
    try {
      const page = { ref, epoch: 1, page: 2, processed: 10, errors: 0, now: T0 + 21 };

      await lossy.commit({ ...page, checkpoint: { cursor: 'c-3', watermark: null } });

      expect(faults.counts.lostAnswers).toBe(1);
      expect(await chains.get(ref)).toMatchObject({
        nextPage: 3,
        processed: 20,
        checkpoint: { page: 2, at: T0 + 21 },
      });
      // Another delivery's commit of the same page is still a duplicate.
      await expect(
        lossy.commit({ ...page, now: T0 + 22, checkpoint: { cursor: 'c-3', watermark: null } }),
      ).rejects.toBeInstanceOf(DuplicatePageError);
    } finally {
      close();
    }
  });

  it("arms a tail pass whose arming lost its answer, and still not another decider's", async () => {
    const run = await plannedRun();
    const idle = { runId: run.runId, partition: 1 };
    await chains.claim(idle, 1, 1, T0 + 3);
    await commit(idle, 1, 'idle');
    const { lossy, close } = await losingAnswer();
    try {
      expect(await lossy.armTail(idle, 1, 'v-9', 2, T0 + 20)).toBe(true);
      expect(await lossy.armTail(idle, 1, 'v-9', 2, T0 + 21)).toBe(false);
    } finally {
      close();
    }
  });
});
