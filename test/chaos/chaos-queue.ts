import type { PageMessage } from '../../lib/queue/page-message.js';
import type { PageQueue } from '../../lib/queue/page-queue.js';
import type { DeliveryFaults } from './plan.js';
import type { Rng } from './rng.js';

/** What the wrapper did during a trial. */
export interface DeliveryStats {
  sends: number;
  duplicates: number;
  resends: number;
  delayed: number;
  redeliveries: number;
  sendFailures: number;
  /** Successors held back as a queue backlog. */
  held: number;
}

/** The SQS error a faulty send throws (the step fails; its message is redelivered). */
export class SimulatedSendError extends Error {
  override readonly name = 'SimulatedSendError';
}

/**
 * A PageQueue whose sends misbehave the way SQS is allowed to: a message delivered twice (at-least-
 * once), an old message delivered again long after, a message delayed. Built on the real queue
 * with `Object.create`, so `sendAt` (deferrals) goes through the faulty `send` too.
 */
export class ChaosQueue {
  readonly queue: PageQueue;
  private faults: DeliveryFaults | null = null;
  private rng: Rng | null = null;
  private history: PageMessage[] = [];
  stats: DeliveryStats = {
    sends: 0,
    duplicates: 0,
    resends: 0,
    delayed: 0,
    redeliveries: 0,
    sendFailures: 0,
    held: 0,
  };
  private backlog: { runId: string; page: number } | null = null;
  /** The successor held back by the backlog fault: sent and confirmed, delivered to nobody yet. */
  held: PageMessage | null = null;
  private readonly base: PageQueue;

  constructor(base: PageQueue) {
    const queue = Object.create(base) as PageQueue;
    queue.send = (message, delaySeconds = 0) => this.send(base, message, delaySeconds);
    // A batch meets the same faults message by message; a failed send is a failed entry, as
    // SendMessageBatch reports it, not an error of the whole call.
    queue.sendBatch = async (messages) => {
      const failed: PageMessage[] = [];
      for (const message of messages) {
        try {
          await this.send(base, message, 0);
        } catch (error) {
          if (!(error instanceof SimulatedSendError)) throw error;
          failed.push(message);
        }
      }
      return failed;
    };
    this.queue = queue;
    this.base = base;
  }

  /** Delivers a message again now, as SQS does when its visibility timeout runs out. */
  async redeliver(message: PageMessage): Promise<void> {
    this.stats.redeliveries += 1;
    await this.base.send(message, 0);
  }

  /** Turns faults on for one trial (the random stream is the trial's, so the fault sequence is seeded). */
  arm(faults: DeliveryFaults, rng: Rng): void {
    this.faults = faults;
    this.rng = rng;
    this.history = [];
    this.stats = {
      sends: 0,
      duplicates: 0,
      resends: 0,
      delayed: 0,
      redeliveries: 0,
      sendFailures: 0,
      held: 0,
    };
  }

  disarm(): void {
    this.faults = null;
    this.backlog = null;
  }

  /** Holds back the first successor of `runId` of page ≥ `page` (a queue backlog), until {@link release}. */
  armBacklog(runId: string, page: number): void {
    this.backlog = { runId, page };
  }

  /** Delivers the held successor now (the backlog cleared); false when nothing was held. */
  async release(): Promise<PageMessage | null> {
    const message = this.held;
    this.held = null;
    this.backlog = null;
    if (message) await this.base.send(message, 0);
    return message;
  }

  private async send(base: PageQueue, message: PageMessage, delaySeconds: number): Promise<void> {
    const { faults, rng } = this;
    if (!faults || !rng) return base.send(message, delaySeconds);
    this.stats.sends += 1;
    // A successor (page > 1, not a deferral's wake-up) lost between its commit and its send.
    if (
      message.page > 1 &&
      !message.deferred &&
      this.stats.sendFailures < (faults.maxSendFailures ?? 0) &&
      rng.chance(faults.sendFailureRate ?? 0)
    ) {
      this.stats.sendFailures += 1;
      throw new SimulatedSendError(`SQS SendMessage failed for page ${message.page}`);
    }
    const backlog = this.backlog;
    if (backlog && message.runId === backlog.runId && message.page >= backlog.page && !message.deferred) {
      // The send succeeds (the engine confirms it), but the message waits behind a backlog.
      this.backlog = null;
      this.held = message;
      this.stats.held += 1;
      return;
    }
    const delay = (): number => {
      if (this.stats.delayed >= faults.maxDelays || !rng.chance(faults.delayRate)) return 0;
      this.stats.delayed += 1;
      return rng.int(1, 2);
    };
    await base.send(message, Math.max(delaySeconds, delay()));
    if (rng.chance(faults.duplicateRate)) {
      this.stats.duplicates += 1;
      await base.send(message, Math.max(delaySeconds, delay()));
    }
    if (this.history.length > 0 && rng.chance(faults.resendRate)) {
      this.stats.resends += 1;
      await base.send(rng.pick(this.history), 0);
    }
    this.history.push(message);
  }
}
