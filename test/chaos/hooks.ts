import { type EngineHooks, SimulatedCrashError, type StepPoint } from '../../lib/engine/index.js';

/** Where a hook fired: the page step of one worker. */
export interface StepContext {
  readonly runId: string;
  readonly epoch: number;
  readonly page: number;
  /** The partition of a partitioned run the page belongs to. */
  readonly partition?: number;
}

/**
 * A planned crash at the first in-process step point of its page or a later one (a page the
 * worker process takes cannot crash here); `onCrash` runs just before the worker "dies" (the
 * zombie takes over its message there).
 */
export interface PlannedCrash {
  readonly point: StepPoint;
  readonly page: number;
  readonly onCrash?: (context: StepContext) => void;
  /** Runs before the worker dies, while it is still alive and heartbeating (a long fetch). */
  readonly before?: (context: StepContext) => Promise<void>;
}

/** What a trial arms the in-process workers' hooks with. */
export interface TrialHooks {
  readonly crashes: readonly PlannedCrash[];
  /** Runs at every step point of the armed run before any crash check (touches happen here). */
  readonly onStep?: (point: StepPoint, context: StepContext) => Promise<void>;
}

/** A crash that happened. */
export interface FiredCrash extends StepContext {
  readonly point: StepPoint;
}

/**
 * The engine hooks of the in-process workers: each planned crash fires once, at its step point of
 * its page (or a later one), by throwing {@link SimulatedCrashError} — the poller then leaves the message in flight,
 * as a dead Lambda would. Armed for one run at a time (by run id, set as soon as it is known).
 */
export class ChaosHooks implements EngineHooks {
  private armed: { trial: TrialHooks; pending: PlannedCrash[]; runId: string | null } | null = null;
  fired: FiredCrash[] = [];

  arm(trial: TrialHooks): void {
    this.armed = { trial, pending: [...trial.crashes], runId: null };
    this.fired = [];
  }

  /** Restricts the armed hooks to one run (messages of older runs never reach a step point anyway). */
  bind(runId: string): void {
    if (this.armed) this.armed.runId = runId;
  }

  disarm(): void {
    this.armed = null;
  }

  async at(point: StepPoint, context: StepContext): Promise<void> {
    const armed = this.armed;
    if (!armed || (armed.runId !== null && armed.runId !== context.runId)) return;
    await armed.trial.onStep?.(point, context);
    const index = armed.pending.findIndex((c) => c.point === point && c.page <= context.page);
    if (index < 0) return;
    const [crash] = armed.pending.splice(index, 1);
    await crash!.before?.(context);
    this.fired.push({ point, ...context });
    crash!.onCrash?.(context);
    throw new SimulatedCrashError(`chaos: simulated crash at ${point} of page ${context.page}`);
  }
}
