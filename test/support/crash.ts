import { type EngineHooks, SimulatedCrashError, type StepPoint } from '../../lib/engine/index.js';

export { type MovableClock, movableClock } from '../../lib/local/movable-clock.js';

/** One planned crash: at this step point, on this page, of this run (any run when omitted). */
export interface CrashPlan {
  readonly point: StepPoint;
  readonly page: number;
  readonly runId?: string;
  /** Only on this partition's page (partitioned runs); any chain when omitted. */
  readonly partition?: number;
  /** How many times to crash there (default once). */
  readonly times?: number;
}

/**
 * Engine hooks whose plan tests can swap: each planned crash throws {@link SimulatedCrashError}
 * at its step point, which the local runtime treats as a worker dying with the message in flight.
 */
export class CrashHooks implements EngineHooks {
  private plan: CrashPlan | undefined;
  private remaining = 0;
  crashes = 0;
  private waiters: (() => void)[] = [];

  /** Arms a crash plan (replacing any previous one). */
  arm(plan: CrashPlan): void {
    this.plan = plan;
    this.remaining = plan.times ?? 1;
  }

  disarm(): void {
    this.plan = undefined;
  }

  /** Resolves once the next planned crash has happened. */
  nextCrash(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  at(point: StepPoint, context: { runId: string; page: number; partition?: number }): void {
    const plan = this.plan;
    if (!plan || this.remaining <= 0 || plan.point !== point || plan.page !== context.page) return;
    if (plan.runId && plan.runId !== context.runId) return;
    if (plan.partition !== undefined && plan.partition !== context.partition) return;
    this.remaining -= 1;
    this.crashes += 1;
    for (const resolve of this.waiters.splice(0)) setTimeout(resolve, 50);
    throw new SimulatedCrashError(`simulated crash at ${point} of page ${context.page}`);
  }
}
