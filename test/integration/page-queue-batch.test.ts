import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { pageMessage } from '../../lib/engine/chain/handoff.js';
import { parsePageMessage } from '../../lib/queue/page-message.js';
import { UnsendableMessageError } from '../../lib/queue/sendable.js';
import { useEngineWithFakes } from '../support/harness.js';

/*
 * The page queue's batch send against SQS: a plan of k partitions hands its first pages over in
 * ceil(k / 10) SendMessageBatch calls (SQS takes ten entries a call), every message delivered.
 */

const { engine } = useEngineWithFakes('page-queue-batch', { workers: 0 });

describe('PageQueue.sendBatch', () => {
  it('sends twelve first pages in two calls, and all twelve arrive', async () => {
    const run = { runId: 'batch-run', sourceId: 'batch-src', epoch: 1 };
    const messages = Array.from({ length: 12 }, (_, partition) => pageMessage(run, 1, null, { partition }));
    const calls: number[] = [];
    engine.aws.clients.sqs.middlewareStack.add(
      (next) => async (args) => {
        const entries = (args.input as { Entries?: unknown[] }).Entries;
        if (entries) calls.push(entries.length);
        return next(args);
      },
      { step: 'initialize', name: 'batchCounter' },
    );

    expect(await engine.deps.queue.sendBatch(messages)).toEqual([]);

    expect(calls).toEqual([10, 2]);
    const received = new Set<number>();
    for (let tries = 0; tries < 20 && received.size < 12; tries++) {
      const { Messages = [] } = await engine.aws.clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: engine.aws.resources.pageQueueUrl, MaxNumberOfMessages: 10 }),
      );
      for (const m of Messages) received.add(parsePageMessage(m.Body!).partition!);
    }
    expect([...received].sort((a, b) => a - b)).toEqual(messages.map((m) => m.partition));
  });

  it('refuses a batch holding a message SQS could never take, before sending any of it', async () => {
    const run = { runId: 'batch-run-2', sourceId: 'batch-src', epoch: 1 };
    const huge = pageMessage(run, 2, 'c'.repeat(2_000_000), { partition: 1 });
    await expect(
      engine.deps.queue.sendBatch([pageMessage(run, 1, null, { partition: 0 }), huge]),
    ).rejects.toBeInstanceOf(UnsendableMessageError);
  });
});
