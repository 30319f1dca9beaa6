import type { SQSClient } from '@aws-sdk/client-sqs';
import { type InProcessWorkers, queueCounts } from './workers.js';

/** The page queue and who holds its in-flight messages, at one instant. */
export interface InFlightSample {
  readonly visible: number;
  readonly delayed: number;
  readonly notVisible: number;
  /** Messages the in-process workers are handling. */
  readonly busy: number;
  /**
   * In-flight messages nobody known holds: the worker process's (alive), or one a killed process
   * took with it. Zero means no live worker can be working on anything.
   */
  readonly unexplained: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Accounts for the page queue's in-flight messages: held by an in-process worker (counted), left
 * in flight for good by a simulated crash (counted), left by earlier trials (the baseline,
 * measured with no run active) — and the rest, which the worker process holds.
 */
export class InFlightLedger {
  private baseline = 0;

  constructor(
    private readonly workers: InProcessWorkers,
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  /** Measures the dead in-flight messages nobody accounts for; call with no run active. Returns the baseline. */
  async calibrate(): Promise<number> {
    let least = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 4; i++) {
      least = Math.min(least, (await this.sample()).unexplained);
      await sleep(150);
    }
    this.baseline += least;
    return this.baseline;
  }

  /** Reuses a baseline measured earlier in the trial (valid as long as no worker process was killed since). */
  useBaseline(baseline: number): void {
    this.baseline = baseline;
  }

  async sample(): Promise<InFlightSample> {
    // Order matters: a crash between these reads must never be subtracted twice.
    const crashed = this.workers.crashedInFlight;
    const busyBefore = this.workers.busy;
    const counts = await queueCounts(this.sqs, this.queueUrl);
    const busy = Math.max(busyBefore, this.workers.busy);
    return { ...counts, busy, unexplained: counts.notVisible - busy - crashed - this.baseline };
  }
}
