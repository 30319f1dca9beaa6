import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { HandlerExecutionContext, InitializeHandlerArguments, Pluggable } from '@smithy/types';
import { beforeAll, describe, expect, it } from 'vitest';
import { GRANT } from '../../lib/budget/grants.js';
import { processPage, startRun } from '../../lib/engine/index.js';
import { resumeChains } from '../../lib/engine/run/restart.js';
import { type PageMessage, parsePageMessage } from '../../lib/queue/page-message.js';
import { SyncRunStore } from '../../lib/store/sync-runs.js';
import type { FakeSource } from '../../tools/fake-source/index.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';

/*
 * What one page costs the control plane: every AWS request the page step makes that is not an
 * item read or write, counted by an SDK middleware on the engine's clients while `processPage`
 * runs, rate budget included. The event source mapping's receive and delete (2 per page) are
 * outside the engine and not counted here.
 */

const PAGES = 6;
let fake: FakeSource;
let counting = false;
const counted: string[] = [];

const { engine, startFake } = useEngineWithFakes('page-requests', {
  workers: 0,
  heartbeatIntervalMs: 600_000,
});
beforeAll(async () => {
  // No timer heartbeat within a page: the count is the page's own requests, however slow the machine.
  fake = await startFake({ entities: PAGES * 5, seed: 7 });
  const counter: Pluggable<object, object> = {
    applyToStack: (stack) =>
      stack.add(
        (next, context: HandlerExecutionContext) => async (args: InitializeHandlerArguments<object>) => {
          if (counting && !touchesItems(args.input as Record<string, unknown>))
            counted.push(
              `${context.clientName?.replace(/Client$/, '')}.${context.commandName?.replace(/Command$/, '')}`,
            );
          return next(args);
        },
        { step: 'initialize', name: 'pageRequestsCounter', priority: 'low' },
      ),
  };
  engine.aws.clients.dynamo.middlewareStack.use(counter as never);
  engine.aws.clients.sqs.middlewareStack.use(counter as never);
});

/** Item-side requests (the Items table) are not control plane. */
function touchesItems(input: Record<string, unknown>): boolean {
  const table = input.TableName ?? Object.keys((input.RequestItems as object | undefined) ?? {})[0];
  return typeof table === 'string' && table === engine.aws.names.itemsTable;
}

async function takeOne(runId: string): Promise<PageMessage> {
  const queueUrl = engine.aws.resources.pageQueueUrl;
  for (let tries = 0; tries < 20; tries++) {
    const { Messages = [] } = await engine.aws.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1 }),
    );
    for (const m of Messages) {
      await engine.aws.clients.sqs.send(
        new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }),
      );
      const message = parsePageMessage(m.Body!);
      if (message.runId === runId) return message;
    }
  }
  throw new Error(`no page message for run ${runId}`);
}

/** Processes one page message, returning the step's result and its control-plane requests by operation. */
async function countedPage(message: PageMessage) {
  counted.length = 0;
  counting = true;
  let result: Awaited<ReturnType<typeof processPage>>;
  try {
    result = await processPage(engine.deps, message);
  } finally {
    counting = false;
  }
  const ops: Record<string, number> = {};
  for (const op of counted) ops[op] = (ops[op] ?? 0) + 1;
  return { result, ops };
}

/** Starts a run of a fresh source and processes its first `pages` pages; returns the run id. */
async function runPages(sourceId: string, pages: number): Promise<string> {
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url, { pageSize: 5 }));
  const { runId } = await startRun(engine.deps, { sourceId, mode: 'full' });
  for (let page = 1; page <= pages; page++) await processPage(engine.deps, await takeOne(runId));
  return runId;
}

/** Runs a whole run page by page, returning each page's control-plane requests by operation. */
async function pagesOfARun(
  sourceId = 'requests',
  before?: () => Promise<void>,
): Promise<Record<string, number>[]> {
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url, { pageSize: 5 }));
  await before?.();
  const { runId } = await startRun(engine.deps, { sourceId, mode: 'full' });
  const pages: Record<string, number>[] = [];
  for (let page = 1; page <= PAGES; page++) pages.push((await countedPage(await takeOne(runId))).ops);
  return pages;
}

const total = (ops: Record<string, number>) => Object.values(ops).reduce((sum, n) => sum + n, 0);

describe('control-plane requests of a page', () => {
  let pages: Record<string, number>[];
  beforeAll(async () => {
    pages = await pagesOfARun();
  });

  it('reads and claims the chain in one write: no separate chain read', () => {
    for (const ops of pages.slice(1, -1)) expect(ops['DynamoDB.BatchGetItem'] ?? 0).toBe(0);
  });

  it('sends the next page without a separate confirmation write', () => {
    // Middle pages: one claim and one commit on the chain; no third chain write.
    for (const ops of pages.slice(1, -1)) expect(ops['DynamoDB.UpdateItem'] ?? 0).toBe(2);
  });

  it('asks dead_letters nothing while the run and its source have no open item dead letter', () => {
    for (const ops of pages.slice(0, -1)) expect(ops['DynamoDB.Query'] ?? 0).toBe(0);
    // The page that ends the run counts the dead letters it filed, once, for its fixed outcome.
    expect(pages.at(-1)!['DynamoDB.Query'] ?? 0).toBe(1);
  });

  it('reads the run item on its first pages only: later pages use the copy their worker kept', () => {
    // Page 1 reads the queued run and again once started; page 2 reads the running run and keeps it.
    expect(pages[1]!['DynamoDB.GetItem'] ?? 0).toBe(1);
    for (const ops of pages.slice(2, -1)) expect(ops['DynamoDB.GetItem'] ?? 0).toBe(0);
  });

  it('writes the rate budget once for several pages while it is plentiful: a grant, quiet responses unsettled', () => {
    // Without grants: a take and a settle on each of the four middle pages.
    const writes = pages.slice(1, -1).reduce((sum, ops) => sum + (ops['DynamoDB.PutItem'] ?? 0), 0);
    expect(writes).toBeLessThanOrEqual(Math.ceil(4 / GRANT.tokens) + 1);
  });

  it('costs at most 4 engine requests a page in the middle of a run, on average (6 with the queue’s receive and delete)', () => {
    // The claim, the commit, the next page's send, a share of the budget's grant (and page 2's run read).
    const middle = pages.slice(1, -1);
    expect(middle.reduce((sum, ops) => sum + total(ops), 0) / middle.length).toBeLessThanOrEqual(4);
    for (const ops of pages.slice(2, -1)) expect(total(ops)).toBeLessThanOrEqual(4);
  });
});

describe('a run item kept by the worker from the previous page', () => {
  it('does not let a page of a fenced epoch through: the claim refuses it and the run is read again', async () => {
    const runId = await runPages('kept-fenced', 2);
    const stale = await takeOne(runId);
    await resumeChains(engine.deps, await engine.deps.runs.require(runId));

    const { result, ops } = await countedPage(stale);

    expect(result).toEqual({ outcome: 'dropped', reason: 'stale_epoch' });
    expect(ops['DynamoDB.GetItem'] ?? 0).toBeGreaterThanOrEqual(1);
    const run = await engine.deps.runs.require(runId);
    expect({ epoch: run.epoch, nextPage: run.nextPage, pages: run.progress.pages }).toEqual({
      epoch: 2,
      nextPage: 3,
      pages: 2,
    });
  });

  it('stops at a cancel it did not read: the cancel marked the chain the claim writes', async () => {
    const runId = await runPages('kept-cancelled', 2);
    const next = await takeOne(runId);
    await engine.deps.lifecycle.cancel(runId, Date.now());

    const { result } = await countedPage(next);

    expect(result).toEqual({ outcome: 'dropped', reason: 'run_cancelled' });
    const run = await engine.deps.runs.require(runId);
    expect({ state: run.state, pages: run.progress.pages }).toEqual({ state: 'cancelled', pages: 2 });
  });

  it('learns from its claim that another worker filed the run’s first item dead letter', async () => {
    const runId = await runPages('kept-dead-letter', 2);
    const next = await takeOne(runId);
    // Another container (its own store, its own kept items) marks the run before filing an entry.
    await new SyncRunStore(engine.aws.clients.doc, engine.aws.names.syncRunsTable).markItemDeadLetters(runId);

    const { result, ops } = await countedPage(next);

    expect(result).toMatchObject({ outcome: 'committed' });
    expect(ops['DynamoDB.GetItem'] ?? 0).toBe(0);
    // The page looks for entries its loads resolve, as every page of a run with dead letters does.
    expect(ops['DynamoDB.Query'] ?? 0).toBeGreaterThanOrEqual(1);
  });
});

describe('a run whose source holds an open item dead letter', () => {
  it('looks for it on every page and resolves it once the entity is stored', async () => {
    const entityId = fake.truth().entities[7]!.id;
    const pages = await pagesOfARun('with-dead-letter', async () => {
      await engine.deps.deadLetters.record({
        sourceId: 'with-dead-letter',
        kind: 'item',
        ref: entityId,
        errorClass: 'permanent',
        reason: 'invalid record: filed by an earlier run',
        attempts: 1,
        runId: 'earlier',
        page: 1,
        now: Date.now() - 60_000,
      });
    });

    expect(pages.every((ops) => (ops['DynamoDB.Query'] ?? 0) >= 1)).toBe(true);
    expect(await engine.deps.deadLetters.listAll('with-dead-letter')).toEqual([]);
  });
});
