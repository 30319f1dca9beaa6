import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type EngineDeps, handlePageRecord, SimulatedCrashError } from '../../lib/engine/index.js';
import { pollQueue } from '../../lib/local/sqs-poller.js';

/** The page queue as SQS counts it. */
export interface QueueCounts {
  readonly visible: number;
  readonly notVisible: number;
  readonly delayed: number;
}

/** Reads a queue's message counts (moto counts them exactly). */
export async function queueCounts(sqs: SQSClient, queueUrl: string): Promise<QueueCounts> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  return {
    visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
    notVisible: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/**
 * In-process page workers: the local runtime's SQS poller and page handler, with the bookkeeping
 * the stall oracle needs — how many messages they hold right now, and how many they left in
 * flight for good by crashing (a SimulatedCrashError leaves its message invisible for the queue's
 * whole visibility timeout, exactly as a dead Lambda does).
 */
export class InProcessWorkers {
  private readonly controller = new AbortController();
  private readonly loops: Promise<void>[] = [];
  /** Messages being handled now. */
  busy = 0;
  /** Messages left in flight by simulated crashes, since the start. */
  crashedInFlight = 0;

  constructor(
    private readonly deps: EngineDeps,
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  start(count: number): this {
    for (let i = 0; i < count; i++) {
      this.loops.push(
        pollQueue({
          sqs: this.sqs,
          queueUrl: this.queueUrl,
          handler: (message) => this.handle(message),
          logger: this.deps.logger,
          signal: this.controller.signal,
          batchSize: 1,
          redeliveryDelay: () => 1,
        }),
      );
    }
    return this;
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await Promise.all(this.loops);
  }

  private async handle(message: { body: string; messageId: string }): Promise<unknown> {
    this.busy += 1;
    try {
      return await handlePageRecord(this.deps, message);
    } catch (error) {
      if (error instanceof SimulatedCrashError) this.crashedInFlight += 1;
      throw error;
    } finally {
      this.busy -= 1;
    }
  }
}
