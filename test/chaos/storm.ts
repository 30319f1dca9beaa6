import { RELIABILITY } from '../../lib/config/constants.js';
import type { SyncRun } from '../../lib/run/model.js';
import { decodeCursor, type FakeSource } from '../../tools/fake-source/index.js';
import { compareKeys } from '../../tools/fake-source/model.js';
import type { FaultProfile } from '../../tools/fake-source/profiles.js';
import type { ChaosEnv } from './chaos-env.js';
import type { StormFault, TrialPlan } from './plan.js';

/**
 * The 429 storm fault (plan.ts `StormFault`): the source throttles every request for hours, the
 * engine defers the page again and again through schedules, and the supervisor lets the trial's
 * clock run to each wake-up (pauses.ts) — shared by the in-process workers, the worker process
 * and the runtime's schedule firer, so hours pass in seconds for all of them.
 */

/** The source's faults outside a storm: the plan's broken records and short 429s. */
export function sourceProfile(plan: Pick<TrialPlan, 'invalid' | 'rate429'>): FaultProfile {
  return { invalidRecords: plan.invalid, rate429: plan.rate429, retryAfterSeconds: [1, 2] };
}

/** What a storm did to one run. */
export interface StormRecord {
  readonly fault: StormFault;
  /** When it began and ended on the trial's clock (null: it never began, or never ended during the run). */
  readonly startedAt: number | null;
  readonly endedAt: number | null;
}

/** Plays one planned storm for the supervisor of one run. */
export class StormWatch {
  private startedAt: number | null = null;
  private endedAt: number | null = null;

  constructor(
    private readonly env: ChaosEnv,
    private readonly fake: FakeSource,
    private readonly plan: TrialPlan,
    readonly fault: StormFault,
    private readonly log: (line: string) => void,
  ) {}

  /** Begins the storm once the run committed the planned pages. */
  maybeStart(pagesCommitted: number): void {
    if (this.startedAt !== null || pagesCommitted < this.fault.afterPages) return;
    const broken = this.fake.truth().invalidIds.join();
    this.fake.control.setProfile({
      ...sourceProfile(this.plan),
      rate429: 1,
      retryAfterSeconds: this.fault.retryAfterSeconds,
      maxConsecutiveFailures: Number.MAX_SAFE_INTEGER,
    });
    // Switching profile chooses the broken records again from the seed: the same ones, or the
    // trial's truth would change under it.
    if (this.fake.truth().invalidIds.join() !== broken)
      throw new Error('the storm changed the broken records');
    this.startedAt = this.env.clock.now();
    const lasting = this.fault.durationMs === null ? 'for good' : `for ${this.fault.durationMs} ms`;
    this.log(
      `429 storm after ${pagesCommitted} pages: Retry-After ${this.fault.retryAfterSeconds} s on every request, ${lasting}`,
    );
  }

  /** Ends the storm — the source recovers — when it is due by `at`, or now with `force`. */
  endIfDue(at: number, force = false): void {
    if (this.startedAt === null || this.endedAt !== null) return;
    const due = this.fault.durationMs === null ? null : this.startedAt + this.fault.durationMs;
    if (!force && (due === null || at < due)) return;
    this.fake.control.setProfile(sourceProfile(this.plan));
    this.endedAt = force ? this.env.clock.now() : due;
    this.log(`429 storm over after ${this.endedAt! - this.startedAt} ms on the trial's clock`);
  }

  record(): StormRecord {
    return {
      fault: this.fault,
      startedAt: this.startedAt,
      endedAt: this.endedAt,
    };
  }
}

/** Whether a run must be checked as ended by an endless storm: it met one, and did not succeed. */
export function endedByStorm(storm: StormRecord | null, run: Pick<SyncRun, 'state'>): boolean {
  return (
    storm !== null && storm.fault.durationMs === null && storm.startedAt !== null && run.state !== 'succeeded'
  );
}

/** The entities the page after `cursor` holds in a full listing (`''`: the first page). */
export function pageAfter(fake: FakeSource, cursor: string, pageSize: number) {
  const key = cursor === '' ? null : decodeCursor(cursor);
  if (cursor !== '' && !key) throw new Error(`not a fake-source cursor: ${cursor}`);
  const ahead = fake
    .truth()
    .entities.filter(
      (e) => key === null || compareKeys({ updatedAtMs: Date.parse(e.updatedAt), id: e.id }, key) > 0,
    );
  return ahead.slice(0, pageSize);
}

/** The 6 h progress budget, for messages. */
export const BUDGET_HOURS = RELIABILITY.progressBudgetMs / 3_600_000;
