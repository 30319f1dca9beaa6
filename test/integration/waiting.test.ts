import { ListSchedulesCommand } from '@aws-sdk/client-scheduler';
import { DeleteMessageCommand, PurgeQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RELIABILITY } from '../../lib/config/constants.js';
import type { StepResult } from '../../lib/engine/index.js';
import {
  drainDeadMessage,
  type EngineDeps,
  processPage,
  reap,
  SimulatedCrashError,
  type StepPoint,
  startRun,
} from '../../lib/engine/index.js';
import { endRun } from '../../lib/engine/run/finish.js';
import { type PageMessage, parsePageMessage } from '../../lib/queue/page-message.js';
import { deferralSchedulePrefix, redeliveryDelaySeconds } from '../../lib/queue/page-queue.js';
import { isTerminal, type RunMode, type SyncRun } from '../../lib/run/model.js';
import type { FakeSource } from '../../tools/fake-source/index.js';
import { movableClock } from '../support/crash.js';
import { fakeRestConfig, fastRetry, putSource, useEngineWithFakes } from '../support/harness.js';

/*
 * Waiting is not crashing (issue 10): a page that waits in the queue, on a deferral or for its
 * redelivery is never fenced, restarted or counted; a successor lost between commit and send is
 * sent again at the same epoch. Each test drives the steps by hand on the movable clock.
 */

const SILENCE = RELIABILITY.silenceThresholdMs + 1_000;
const clock = movableClock();
let fake: FakeSource;
let counter = 0;

const { engine, startFake } = useEngineWithFakes('waiting', {
  workers: 0,
  clock,
  retry: { ...fastRetry(), now: () => clock.now() },
});
beforeAll(async () => {
  // The retry loop reads the same movable clock, so a source's waits are measured on it too.
  fake = await startFake({ entities: 300, seed: 41 });
});
beforeEach(async () => {
  await engine.aws.clients.sqs.send(new PurgeQueueCommand({ QueueUrl: engine.aws.resources.pageQueueUrl }));
});
afterEach(() => fake.control.setProfile('none'));

async function startedRun(mode: RunMode = 'full'): Promise<string> {
  const sourceId = `waiting-${++counter}`;
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url));
  return (await startRun(engine.deps, { sourceId, mode })).runId;
}

/** Receives and deletes the page messages of `runId` now visible in the queue. */
async function take(runId: string): Promise<PageMessage[]> {
  const found: PageMessage[] = [];
  for (;;) {
    const { Messages = [] } = await engine.aws.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: engine.aws.resources.pageQueueUrl, MaxNumberOfMessages: 10 }),
    );
    if (Messages.length === 0) return found;
    for (const m of Messages) {
      await engine.aws.clients.sqs.send(
        new DeleteMessageCommand({
          QueueUrl: engine.aws.resources.pageQueueUrl,
          ReceiptHandle: m.ReceiptHandle,
        }),
      );
      const message = parsePageMessage(m.Body!);
      if (message.runId === runId) found.push(message);
    }
  }
}

async function takeOne(runId: string): Promise<PageMessage> {
  const messages = await take(runId);
  expect(messages).toHaveLength(1);
  return messages[0]!;
}

/** The engine with a hook at one step point of one page. */
function withHook(page: number, point: StepPoint, act: () => Promise<void> | void): EngineDeps {
  return {
    ...engine.deps,
    hooks: {
      async at(p, context) {
        if (p === point && context.page === page) await act();
      },
    },
  };
}

const crash = () => {
  throw new SimulatedCrashError('worker died');
};

describe('a backlogged queue', () => {
  it('leaves a run whose next page waits minutes in the queue running, unfenced and uncounted, and reports it waiting', async () => {
    const runId = await startedRun('full');

    // Page 1 itself waits five minutes before any worker takes it.
    clock.advance(5 * 60_000);
    const first = await reap(engine.deps);
    expect(first.actions.map((a) => a.runId)).not.toContain(runId);
    expect(first.waiting.map((w) => w.runId)).toContain(runId);

    expect(await processPage(engine.deps, await takeOne(runId))).toEqual({
      outcome: 'committed',
      next: 'enqueued',
    });
    // Page 2 waits five minutes too.
    clock.advance(5 * 60_000);
    const second = await reap(engine.deps);

    // A commit's successor carries no send confirmation: the reaper cannot tell it from a lost
    // send, so it sends it once more (same epoch, confirmed) and reports the run waiting.
    expect(second.actions.filter((a) => a.runId === runId)).toEqual([
      { runId, verdict: 'send_unconfirmed', action: 'resend' },
    ]);
    expect(second.waiting).toContainEqual({ runId, since: expect.any(Number) });
    const run = await engine.deps.runs.require(runId);
    expect(run).toMatchObject({ state: 'running', epoch: 1, restarts: 0, nextPage: 2 });
    expect(run.handoff).toMatchObject({ page: 2, sentAt: expect.any(Number) });
    // Five more minutes: the confirmed re-send waits, sent no third time.
    clock.advance(5 * 60_000);
    const third = await reap(engine.deps);
    expect(third.actions.map((a) => a.runId)).not.toContain(runId);
    expect(third.waiting).toContainEqual({ runId, since: expect.any(Number) });
    const [page2, copy] = await take(runId);
    expect(page2).toMatchObject({ epoch: 1, page: 2 });
    expect(copy).toEqual(page2);
    expect(await processPage(engine.deps, page2!)).toEqual({ outcome: 'committed', next: 'enqueued' });
    expect(await processPage(engine.deps, copy!)).toEqual({ outcome: 'dropped', reason: 'duplicate_page' });
  });

  it('reports a run waiting, unfenced, when the re-send of its queued successor fails', async () => {
    const runId = await startedRun('full');
    expect(await processPage(engine.deps, await takeOne(runId))).toEqual({
      outcome: 'committed',
      next: 'enqueued',
    });
    // Page 2 waits in the queue; the reaper's extra copy meets an SQS outage.
    clock.advance(5 * 60_000);
    const sqsDown: EngineDeps = {
      ...engine.deps,
      queue: Object.assign(Object.create(engine.deps.queue), {
        send: async () => {
          throw new Error('SQS SendMessage: ServiceUnavailable');
        },
      }),
    };
    const report = await reap(sqsDown);

    expect(report.actions.filter((a) => a.runId === runId)).toEqual([]);
    expect(report.waiting).toContainEqual({ runId, since: expect.any(Number) });
    expect(await engine.deps.runs.require(runId)).toMatchObject({ state: 'running', epoch: 1, restarts: 0 });
    // The page that waited is delivered and continues the run; the next pass sends the copy.
    const [page2] = await take(runId);
    expect(await processPage(engine.deps, page2!)).toEqual({ outcome: 'committed', next: 'enqueued' });
  });

  it('still fences a run whose worker took its page and then went silent', async () => {
    const runId = await startedRun('full');
    await expect(processPage(withHook(1, 'afterLoad', crash), await takeOne(runId))).rejects.toBeInstanceOf(
      SimulatedCrashError,
    );

    clock.advance(SILENCE);
    const report = await reap(engine.deps);

    expect(report.actions).toContainEqual({ runId, verdict: 'no_checkpoint', action: 'restart' });
    expect(await engine.deps.runs.require(runId)).toMatchObject({ epoch: 2, restarts: 1 });
  });
});

describe('the first heartbeat of a step', () => {
  it('is written before the fetch, not one interval later', async () => {
    const runId = await startedRun('full');
    await processPage(engine.deps, await takeOne(runId));
    const page2 = await takeOne(runId);
    clock.advance(60_000);
    const before = clock.now();
    let heartbeatAt = 0;
    let handoff: unknown = 'unread';

    await processPage(
      withHook(2, 'beforeFetch', async () => {
        const run = await engine.deps.runs.require(runId);
        heartbeatAt = run.heartbeatAt;
        handoff = run.handoff;
      }),
      page2,
    );

    expect(heartbeatAt).toBeGreaterThanOrEqual(before);
    expect(handoff).toBeNull();
  });
});

describe('a successor lost between commit and send', () => {
  it('is sent again by the reaper at the same epoch from the checkpoint: no restart, no progress lost', async () => {
    const runId = await startedRun('full');
    await expect(processPage(withHook(1, 'afterCommit', crash), await takeOne(runId))).rejects.toBeInstanceOf(
      SimulatedCrashError,
    );
    expect(await take(runId)).toEqual([]);

    clock.advance(SILENCE);
    const report = await reap(engine.deps);

    expect(report.actions).toContainEqual({ runId, verdict: 'send_unconfirmed', action: 'resend' });
    const run = await engine.deps.runs.require(runId);
    expect(run).toMatchObject({ epoch: 1, restarts: 0, nextPage: 2 });
    expect(run.progress.pages).toBe(1);
    const resent = await takeOne(runId);
    expect(resent).toMatchObject({ epoch: 1, page: 2, cursor: run.checkpoint!.cursor });
    expect(await processPage(engine.deps, resent)).toEqual({ outcome: 'committed', next: 'enqueued' });
  });

  it('is sent again by the redelivered page that finds its own commit done (an SQS send failure)', async () => {
    const runId = await startedRun('full');
    const page1 = await takeOne(runId);
    let failures = 1;
    const queue = Object.create(engine.deps.queue) as EngineDeps['queue'];
    queue.send = async (message, delay) => {
      if (failures-- > 0) throw new Error('SQS SendMessage failed');
      return engine.deps.queue.send(message, delay);
    };

    await expect(processPage({ ...engine.deps, queue }, page1)).rejects.toThrow('SQS SendMessage failed');
    clock.advance(10_000); // the first redelivery delay
    const redelivered = await processPage(engine.deps, page1);

    expect(redelivered).toEqual({ outcome: 'dropped', reason: 'duplicate_page' });
    const run = await engine.deps.runs.require(runId);
    expect(run).toMatchObject({ epoch: 1, restarts: 0, nextPage: 2 });
    expect(await takeOne(runId)).toMatchObject({ epoch: 1, page: 2, cursor: run.checkpoint!.cursor });
  });
});

describe('a poison page', () => {
  it('fails on every delivery at the real redelivery timings, reaches the drain, and the reaper never fences it', async () => {
    const runId = await startedRun('full');
    await processPage(engine.deps, await takeOne(runId));
    const page2 = await takeOne(runId);
    const poisoned = withHook(2, 'afterLoad', () => {
      throw new Error('worker bug on this page');
    });

    for (let receive = 1; receive <= RELIABILITY.maxReceiveCount; receive++) {
      await expect(processPage(poisoned, page2)).rejects.toThrow('worker bug');
      if (receive === RELIABILITY.maxReceiveCount) break;
      // The reaper ticks every minute while the message is invisible.
      let waited = 0;
      const delayMs = redeliveryDelaySeconds(receive) * 1_000;
      while (waited < delayMs) {
        const step = Math.min(RELIABILITY.reaperIntervalMs, delayMs - waited);
        clock.advance(step);
        waited += step;
        expect((await reap(engine.deps)).actions.map((a) => a.runId)).not.toContain(runId);
      }
    }
    clock.advance(30_000);
    expect((await reap(engine.deps)).actions.map((a) => a.runId)).not.toContain(runId);
    const drained = await drainDeadMessage(engine.deps, JSON.stringify(page2), RELIABILITY.maxReceiveCount);

    expect(drained.outcome).toBe('failed_run');
    const run = await engine.deps.runs.require(runId);
    expect(run).toMatchObject({ state: 'failed', epoch: 1, restarts: 0, failure: { reason: 'poison_page' } });
  });
});

describe('a source that answers 429 forever', () => {
  it('ends the run failed / source_unavailable within the budget, releases the lock, and retry-failed resumes it later', async () => {
    fake.control.setProfile({
      perPathOverrides: {
        '/records': { rate429: 1, retryAfterSeconds: 120, maxConsecutiveFailures: 1_000_000 },
      },
    });
    const runId = await startedRun('full');
    const run0 = await engine.deps.runs.require(runId);
    const sourceId = run0.sourceId;
    // Deferred pages are handed straight to the test, which moves the clock to their wake-up.
    const pending: { message: PageMessage; until: number }[] = [];
    const queue = Object.create(engine.deps.queue) as EngineDeps['queue'];
    queue.send = async (message) => void pending.push({ message, until: clock.now() });
    queue.sendAt = async (message, until) => {
      pending.push({ message, until });
      return { via: 'queue', delaySeconds: 0 };
    };
    const deps = { ...engine.deps, queue };
    pending.push({ message: await takeOne(runId), until: clock.now() });

    let last: StepResult | undefined;
    let deliveries = 0;
    while (pending.length > 0 && deliveries < 400) {
      const { message, until } = pending.shift()!;
      clock.advance(Math.max(0, until - clock.now()));
      last = await processPage(deps, message);
      deliveries += 1;
    }

    expect(last).toEqual({ outcome: 'failed', reason: 'source_unavailable' });
    const run = await engine.deps.runs.require(runId);
    expect(run.state).toBe('failed');
    expect(run.failure?.reason).toBe('source_unavailable');
    expect(run.finishedAt! - run.startedAt!).toBeLessThanOrEqual(RELIABILITY.progressBudgetMs);
    expect(deliveries).toBeGreaterThan(100);
    expect((await engine.deps.sources.require(sourceId)).activeRunId).toBeNull();
    const open = await engine.deps.deadLetters.list(sourceId, {});
    expect(open.items).toEqual([expect.objectContaining({ kind: 'page', ref: '', runId })]);

    // The source recovers: retry-failed fetches the page it could not, once the pause the source
    // last asked for (`Retry-After: 120`, honoured by every request of its credential) is over.
    fake.control.setProfile('none');
    clock.advance(121_000);
    const retry = await startRun(engine.deps, { sourceId, mode: 'dlq_retry' });
    let retried = await engine.deps.runs.require(retry.runId);
    for (let step = 0; step < 10 && !isTerminal(retried.state); step++) {
      for (const message of await take(retry.runId)) await processPage(engine.deps, message);
      retried = await engine.deps.runs.require(retry.runId);
    }
    expect(retried.state).toBe('succeeded');
    expect(retried.progress.processed).toBe(100);
    expect((await engine.deps.deadLetters.list(sourceId, {})).items).toEqual([]);
  });
});

/** A full run read as one stream (no planning step): the source's answers meet the page's fetch. */
async function newUnsplitRun(): Promise<string> {
  const sourceId = `waiting-${++counter}`;
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url));
  return (await startRun(engine.deps, { sourceId, mode: 'full', partitions: 1 })).runId;
}

/**
 * The engine with its deferred pages handed to the test, which moves the clock to their wake-up.
 * Without rate budgets: these tests count the source's own answers against the page's attempts.
 */
function handingDeferralsToTest(): { deps: EngineDeps; pending: { message: PageMessage; until: number }[] } {
  const pending: { message: PageMessage; until: number }[] = [];
  const queue = Object.create(engine.deps.queue) as EngineDeps['queue'];
  queue.sendAt = async (message, until) => {
    pending.push({ message, until });
    return { via: 'queue', delaySeconds: 0 };
  };
  const { budgets: _unbudgeted, ...deps } = engine.deps;
  return { deps: { ...deps, queue }, pending };
}

describe('a 429 storm that ends within the budget', () => {
  it('costs the page none of its attempts: a short 429 right after the storm is retried, not dead-lettered', async () => {
    const runId = await newUnsplitRun();
    // Every answer a 429 asking for ten minutes, until the script says otherwise.
    const script: number[] = [];
    const stormy: typeof fetch = async (input, init) => {
      const retryAfter = script.shift() ?? 600;
      if (retryAfter === 0) return engine.deps.fetch(input, init);
      return new Response('{}', { status: 429, headers: { 'retry-after': String(retryAfter) } });
    };
    const handed = handingDeferralsToTest();
    const { pending } = handed;
    const deps = { ...handed.deps, fetch: stormy };
    pending.push({ message: await takeOne(runId), until: clock.now() });
    // An hour of storm: six deferred wake-ups, each throttled again.
    for (let delivery = 0; delivery < 6; delivery++) {
      const { message, until } = pending.shift()!;
      clock.advance(Math.max(0, until - clock.now()));
      expect(await processPage(deps, message)).toMatchObject({ outcome: 'deferred' });
    }

    // The storm is over; the source's first answer is one more short 429, then the page.
    script.push(1, 0, 0);
    const { message, until } = pending.shift()!;
    clock.advance(Math.max(0, until - clock.now()));
    const woken = await processPage(deps, message);

    expect(woken).toEqual({ outcome: 'committed', next: 'enqueued' });
    expect(await engine.deps.runs.require(runId)).toMatchObject({
      state: 'running',
      restarts: 0,
      nextPage: 2,
    });
  });

  it('keeps the failures spent before the long wait: the page’s fifth failure dead-letters it after the wake-up', async () => {
    const runId = await newUnsplitRun();
    // The source's answers, in order, before it answers for real.
    const script = [503, 503, 503, 503, 429];
    const scripted: typeof fetch = async (input, init) => {
      const status = script.shift();
      if (status === undefined) return engine.deps.fetch(input, init);
      return new Response('{}', { status, headers: status === 429 ? { 'retry-after': '600' } : {} });
    };
    const handed = handingDeferralsToTest();
    const deps = { ...handed.deps, fetch: scripted };
    expect(await processPage(deps, await takeOne(runId))).toMatchObject({ outcome: 'deferred' });

    script.push(503);
    const { message, until } = handed.pending.shift()!;
    clock.advance(until - clock.now());
    const woken = await processPage(deps, message);

    expect(woken).toEqual({ outcome: 'failed', reason: 'page_failed' });
    const { sourceId } = await engine.deps.runs.require(runId);
    const pages = (await engine.deps.deadLetters.listAll(sourceId)).filter((e) => e.kind === 'page');
    expect(pages).toEqual([expect.objectContaining({ attempts: RELIABILITY.attemptsPerRequest, runId })]);
  });
});

describe('deferral schedules', () => {
  it('gives a second deferral of the same page its own schedule instead of a swallowed conflict', async () => {
    const runId = await startedRun('full');
    const message = await takeOne(runId);
    const until = clock.now() + 3_600_000;

    await engine.deps.queue.sendAt({ ...message, deferred: true }, until, clock.now());
    await engine.deps.queue.sendAt({ ...message, deferred: true }, until, clock.now());

    const { Schedules = [] } = await engine.aws.clients.scheduler.send(
      new ListSchedulesCommand({
        GroupName: engine.aws.names.scheduleGroup,
        NamePrefix: deferralSchedulePrefix(message),
      }),
    );
    expect(Schedules).toHaveLength(2);
  });
});

describe('the outbox', () => {
  it('re-publishes a run’s outcome event when the worker died between ending the run and publishing', async () => {
    const runId = await startedRun('full');
    await processPage(engine.deps, await takeOne(runId));
    const published: string[] = [];
    let alive = false;
    const events = {
      async publishOutcome(run: SyncRun) {
        if (!alive) throw new Error('worker died before publishing');
        published.push(run.runId);
        return 'SyncRun Failed';
      },
    } as unknown as EngineDeps['events'];
    const deps = { ...engine.deps, events };
    const run = await engine.deps.runs.require(runId);

    await endRun(deps, run, { epoch: 1, state: 'failed', failure: { reason: 'page_failed', message: 'x' } });
    expect(published).toEqual([]);
    expect((await engine.deps.runs.require(runId)).outboxAt).not.toBeNull();

    alive = true;
    clock.advance(SILENCE);
    const report = await reap(deps);

    expect(report.actions).toContainEqual({ runId, verdict: 'outbox', action: 'publish' });
    expect(published).toEqual([runId]);
    expect((await engine.deps.runs.require(runId)).outboxAt).toBeNull();
    clock.advance(SILENCE);
    await reap(deps);
    expect(published).toEqual([runId]);
  });
});
