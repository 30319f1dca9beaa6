import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { HandlerExecutionContext, InitializeHandlerArguments, Pluggable } from '@smithy/types';
import { beforeAll, describe, expect, it } from 'vitest';
import { processPage, startRun } from '../../lib/engine/index.js';
import { type PageMessage, parsePageMessage } from '../../lib/queue/page-message.js';
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

/** Runs a whole run page by page, returning each page's control-plane requests by operation. */
async function pagesOfARun(
  sourceId = 'requests',
  before?: () => Promise<void>,
): Promise<Record<string, number>[]> {
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url, { pageSize: 5 }));
  await before?.();
  const { runId } = await startRun(engine.deps, { sourceId, mode: 'full' });
  const pages: Record<string, number>[] = [];
  for (let page = 1; page <= PAGES; page++) {
    const message = await takeOne(runId);
    counted.length = 0;
    counting = true;
    try {
      await processPage(engine.deps, message);
    } finally {
      counting = false;
    }
    const byOperation: Record<string, number> = {};
    for (const op of counted) byOperation[op] = (byOperation[op] ?? 0) + 1;
    pages.push(byOperation);
  }
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
    for (const ops of pages) expect(ops['DynamoDB.Query'] ?? 0).toBe(0);
  });

  it('costs at most 6 engine requests a page in the middle of a run (8 with the queue’s receive and delete)', () => {
    // The run item's read, the claim, the budget's take and settle, the commit, the next page's send.
    for (const ops of pages.slice(1, -1)) expect(total(ops)).toBeLessThanOrEqual(6);
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
