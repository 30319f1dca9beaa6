import { RELIABILITY } from '../../lib/config/constants.js';
import { decodeCursor, type FakeSource } from '../../lib/local/fake-source/index.js';
import { compareKeys } from '../../lib/local/fake-source/model.js';
import type { FaultProfile } from '../../lib/local/fake-source/profiles.js';
import type { SyncRun } from '../../lib/run/model.js';
import { lastProgressAt } from '../../lib/run/silence.js';
import type { ChaosEnv } from './chaos-env.js';
import type { StormFault, TrialPlan } from './plan.js';
import type { Reap } from './supervisor.js';

/**
 * The 429 storm fault (plan.ts `StormFault`): the source throttles every request for hours, the
 * engine defers the page again and again through schedules, and the supervisor lets the trial's
 * clock run to each wake-up — shared by the in-process workers, the worker process and the
 * runtime's schedule firer, so hours pass in seconds for all of them.
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
  /** Pauses played: the run deferred, nothing in flight, the clock moved to the wake-up. */
  readonly pauses: number;
  /** Reaper actions on the run inside a pause: a deferred run must never be fenced. */
  readonly fencedWhilePaused: readonly Reap[];
}

/** Plays one planned storm for the supervisor of one run. */
export class StormWatch {
  private startedAt: number | null = null;
  private endedAt: number | null = null;
  private pauses = 0;
  private readonly fenced: Reap[] = [];

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

  /**
   * Plays the pause of a deferred run with nothing in flight: one reaper pass just before the
   * wake-up (the run is silent by then; it must be judged deferred, never fenced), the storm's end
   * if it falls before the wake-up, then the clock moved past the wake-up for every worker. The
   * runtime's schedule firer delivers the page on its next tick. Returns the reaper's actions.
   */
  async playPause(run: SyncRun, reapAfter: (ms: number) => Promise<Reap[]>): Promise<Reap[]> {
    const { clock } = this.env;
    const until = run.deferredUntil!;
    const beforeWake = until - 1_000 - clock.now();
    const mine = beforeWake > 0 ? await reapAfter(beforeWake) : [];
    this.fenced.push(...mine);
    // `at()` schedules are due at whole seconds: one more second and the wake-up is due.
    const wake = until + 1_000;
    this.endIfDue(wake);
    clock.advance(Math.max(0, wake - clock.now()));
    await this.env.runtime.syncWorkerClocks();
    this.pauses += 1;
    this.log(
      `pause ${this.pauses}: page ${run.nextPage} (epoch ${run.epoch}) deferred ${Math.round((until - lastProgressAt(run)) / 60_000)} min past its last progress; reaper in the pause: ${JSON.stringify(mine)}; clock moved to the wake-up`,
    );
    return mine;
  }

  record(): StormRecord {
    return {
      fault: this.fault,
      startedAt: this.startedAt,
      endedAt: this.endedAt,
      pauses: this.pauses,
      fencedWhilePaused: [...this.fenced],
    };
  }
}

/** A storm is no crash: the reaper never fences a run while it waits out a deferral. */
export function stormViolation(storm: StormRecord | null): string | null {
  if (!storm || storm.fencedWhilePaused.length === 0) return null;
  return `the reaper acted on the run while it waited out a 429 deferral: ${JSON.stringify(storm.fencedWhilePaused)}`;
}

/** Whether a run ended by an endless storm must be checked as such (it met the storm, and deferred). */
export function endedByStorm(storm: StormRecord | null): boolean {
  return storm !== null && storm.fault.durationMs === null && storm.pauses > 0;
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
