import type { SyncRun } from '../../lib/run/model.js';
import { lastProgressAt } from '../../lib/run/silence.js';
import type { ChaosEnv } from './chaos-env.js';

/** One reaper action on the watched run. */
export interface Reap {
  readonly verdict: string;
  readonly action: string;
}

/** The pauses of one run: deferrals the supervisor waited out by moving the trial's clock. */
export interface PauseRecord {
  readonly count: number;
  /** Reaper actions on the run inside a pause: a deferred run must never be fenced. */
  readonly fenced: readonly Reap[];
}

/**
 * Waits out a deferred run's pause (a 429 storm's `Retry-After`, a wait for the rate budget): one
 * reaper pass just before the wake-up (the run is silent by then and must be judged deferred,
 * never fenced), then the trial's clock moved past the wake-up for every worker — in-process, the
 * worker process and the runtime's schedule firer, which delivers the page on its next tick.
 */
export class PausePlayer {
  private count = 0;
  private readonly fenced: Reap[] = [];

  constructor(
    private readonly env: ChaosEnv,
    private readonly log: (line: string) => void,
    /** Called with the wake-up time before the clock moves there (a storm may end before it). */
    private readonly beforeWake: (wakeAt: number) => void = () => undefined,
  ) {}

  /** Plays the pause of `run` (deferred, nothing in flight); returns the reaper's actions on it. */
  async play(run: SyncRun, reapAfter: (ms: number) => Promise<Reap[]>): Promise<Reap[]> {
    const { clock } = this.env;
    const until = run.deferredUntil!;
    const beforeWake = until - 1_000 - clock.now();
    const mine = beforeWake > 0 ? await reapAfter(beforeWake) : [];
    this.fenced.push(...mine);
    // `at()` schedules are due at whole seconds: one more second and the wake-up is due.
    const wake = until + 1_000;
    this.beforeWake(wake);
    clock.advance(Math.max(0, wake - clock.now()));
    await this.env.runtime.syncWorkerClocks();
    this.count += 1;
    this.log(
      `pause ${this.count}: page ${run.nextPage} (epoch ${run.epoch}) deferred ${Math.round((until - lastProgressAt(run)) / 60_000)} min past its last progress; reaper in the pause: ${JSON.stringify(mine)}; clock moved to the wake-up`,
    );
    return mine;
  }

  record(): PauseRecord {
    return { count: this.count, fenced: [...this.fenced] };
  }
}

/** A pause is no crash: the reaper never fences a run while it waits out a deferral. */
export function pauseViolation(pauses: PauseRecord): string | null {
  if (pauses.fenced.length === 0) return null;
  return `the reaper acted on the run while it waited out a deferral: ${JSON.stringify(pauses.fenced)}`;
}
