import { randomBytes } from 'node:crypto';
import { CreateScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import {
  ChangeMessageVisibilityCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { RELIABILITY } from '../config/constants.js';
import type { PageMessage } from './page-message.js';
import { refusesTheMessage, sendableBody, UnsendableMessageError } from './sendable.js';

/** Where deferred pages go when the wait is longer than SQS can delay. */
export interface DeferralTarget {
  readonly scheduler: SchedulerClient;
  readonly groupName: string;
  readonly queueArn: string;
  /** Role EventBridge Scheduler assumes to send to the queue. */
  readonly roleArn: string;
}

/** The most entries one `SendMessageBatch` call takes. */
const SEND_BATCH_SIZE = 10;

/** How a page was (re-)enqueued. */
export type Enqueued =
  | { readonly via: 'queue'; readonly delaySeconds: number }
  | { readonly via: 'schedule'; readonly name: string; readonly at: string };

/** The part every deferral schedule of one page shares (operators and cleanup list by it). */
export function deferralSchedulePrefix(message: Pick<PageMessage, 'runId' | 'epoch' | 'page'>): string {
  return `defer-${message.runId}-e${message.epoch}-p${message.page}-`;
}

/**
 * A schedule name unique per deferral: the page's prefix, the wake-up time and a random tag. A
 * second deferral of the same page (the first schedule not yet deleted) gets its own schedule
 * instead of colliding with the first; an extra wake-up is harmless (the commit condition).
 */
export function deferralScheduleName(
  message: PageMessage,
  untilMs: number,
  tag = randomBytes(3).toString('hex'),
): string {
  const name = `${deferralSchedulePrefix(message)}${Math.ceil(untilMs / 1_000).toString(36)}-${tag}`;
  // Scheduler names are at most 64 characters; a ULID run id and realistic page numbers fit.
  if (name.length > 64) throw new Error(`deferral schedule name too long: ${name}`);
  return name;
}

/** `at(yyyy-mm-ddThh:mm:ss)` in UTC, rounded up to the next second. */
export function atExpression(ms: number): string {
  return `at(${new Date(Math.ceil(ms / 1_000) * 1_000).toISOString().slice(0, 19)})`;
}

/**
 * The page queue: sends page messages now, later (SQS `DelaySeconds` up to 900 s), or much
 * later (an EventBridge Scheduler one-time schedule that sends the message when due and
 * deletes itself).
 */
export class PageQueue {
  /**
   * @param maxQueueDelayMs - the longest wait sent as an SQS `DelaySeconds` (default and at most
   *   900 s); longer ones become one-time schedules. A local runtime on a movable clock sets 0:
   *   SQS delays run on the emulator's wall clock, its schedule firer on the engine's clock.
   */
  constructor(
    private readonly sqs: SQSClient,
    readonly queueUrl: string,
    private readonly deferral: DeferralTarget | undefined,
    private readonly maxQueueDelayMs: number = RELIABILITY.maxQueueDelayMs,
  ) {}

  /**
   * Sends a page message, optionally delayed by up to 900 s.
   * @throws UnsendableMessageError when the message cannot be delivered at all (see `sendable.ts`).
   */
  async send(message: PageMessage, delaySeconds = 0): Promise<void> {
    const body = sendableBody(message);
    await refusedAsUnsendable(() =>
      this.sqs.send(
        new SendMessageCommand({
          QueueUrl: this.queueUrl,
          MessageBody: body,
          DelaySeconds: Math.max(0, Math.min(900, Math.ceil(delaySeconds))),
        }),
      ),
    );
  }

  /**
   * Sends page messages now, ten to a `SendMessageBatch` call (SQS's limit), and returns those
   * whose entries SQS failed for the moment (a throttle, an internal error): the caller decides
   * what a failed send means for its handoff.
   * @throws UnsendableMessageError when SQS refuses a message itself (a sender fault).
   */
  async sendBatch(messages: readonly PageMessage[]): Promise<PageMessage[]> {
    const failed: PageMessage[] = [];
    for (let start = 0; start < messages.length; start += SEND_BATCH_SIZE) {
      const group = messages.slice(start, start + SEND_BATCH_SIZE);
      const entries = group.map((message, index) => ({
        Id: String(index),
        MessageBody: sendableBody(message),
      }));
      const sent = await refusedAsUnsendable(() =>
        this.sqs.send(new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries })),
      );
      for (const entry of sent.Failed ?? []) {
        if (entry.SenderFault)
          throw new UnsendableMessageError(
            `the queue refused a page message: ${entry.Code} ${entry.Message ?? ''}`,
          );
        failed.push(group[Number(entry.Id)]!);
      }
    }
    return failed;
  }

  /** Enqueues `message` to be processed at `untilMs`, through SQS or a one-time schedule. */
  async sendAt(message: PageMessage, untilMs: number, now: number): Promise<Enqueued> {
    const waitMs = Math.max(0, untilMs - now);
    if (waitMs <= Math.min(this.maxQueueDelayMs, RELIABILITY.maxQueueDelayMs)) {
      const delaySeconds = Math.ceil(waitMs / 1_000);
      await this.send(message, delaySeconds);
      return { via: 'queue', delaySeconds };
    }
    const deferral = this.deferral;
    if (!deferral) throw new Error('no Scheduler target configured for deferrals beyond 900 s');
    const body = sendableBody(message);
    const name = deferralScheduleName(message, untilMs);
    const at = atExpression(untilMs);
    // No ConflictException handling: names are unique per deferral, so a conflict is a real
    // error, and swallowing it would leave the page without a wake-up.
    await refusedAsUnsendable(() =>
      deferral.scheduler.send(
        new CreateScheduleCommand({
          Name: name,
          GroupName: deferral.groupName,
          ScheduleExpression: at,
          ScheduleExpressionTimezone: 'UTC',
          FlexibleTimeWindow: { Mode: 'OFF' },
          ActionAfterCompletion: 'DELETE',
          Target: {
            Arn: deferral.queueArn,
            RoleArn: deferral.roleArn,
            Input: body,
          },
        }),
      ),
    );
    return { via: 'schedule', name, at };
  }

  /** The failure path of a received page message: see {@link redeliverLater}. */
  redeliverLater(receiptHandle: string | undefined, receiveCount: number): Promise<void> {
    return redeliverLater(this.sqs, this.queueUrl, receiptHandle, receiveCount);
  }
}

/**
 * How long a failed page message stays invisible before its next delivery: exponential in the
 * receive count, from 10 s up to 15 minutes. Without this a failure would wait the queue's full
 * visibility timeout (six worker timeouts), and a poison message would take hours to reach the DLQ.
 */
export function redeliveryDelaySeconds(receiveCount: number): number {
  return Math.min(900, 10 * 2 ** Math.max(0, receiveCount - 1));
}

/**
 * Leaves a received message that failed to SQS, to come back after `delay(receiveCount)`
 * seconds; SQS counts the receives and redrives a message that keeps failing to the DLQ. The
 * Lambda page worker and the local poller both end a failed message here. A refused visibility
 * change is not an error of its own: the message then comes back after the queue's visibility
 * timeout, later but not lost.
 */
export async function redeliverLater(
  sqs: SQSClient,
  queueUrl: string,
  receiptHandle: string | undefined,
  receiveCount: number,
  delay: (receiveCount: number) => number = redeliveryDelaySeconds,
): Promise<void> {
  await sqs
    .send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: delay(receiveCount),
      }),
    )
    .catch(() => undefined);
}

/** Runs a send; a refusal of the message itself (not of the moment) becomes {@link UnsendableMessageError}. */
async function refusedAsUnsendable<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (!refusesTheMessage(error)) throw error;
    throw new UnsendableMessageError(`the queue refused the page message: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
