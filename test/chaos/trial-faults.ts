import type { StepPoint } from '../../lib/engine/index.js';
import { decodeCursor, type FakeSource } from '../../tools/fake-source/index.js';
import { compareKeys } from '../../tools/fake-source/model.js';
import type { ChaosEnv } from './chaos-env.js';
import type { StepContext } from './hooks.js';
import type { TrialPlan } from './plan.js';
import type { Rng } from './rng.js';

/**
 * The faults a trial plays from inside the in-process workers' step hooks (modifications behind
 * the cursor, a slow worker whose message is redelivered), and the truth helpers they share with
 * the expectations.
 */

/** One trial in progress: its plan, its source, its random stream, its timeline. */
export interface Trial {
  readonly env: ChaosEnv;
  readonly plan: TrialPlan;
  readonly fake: FakeSource;
  readonly sourceId: string;
  /** The trial's random stream for decisions taken while it runs (which entities to touch, which sends misbehave). */
  readonly rng: Rng;
  readonly log: (line: string) => void;
  /** Dead in-flight messages before the trial's next run, when known (unknown again after a SIGKILL). */
  baseline: number | null;
}

/** Live entities the source serves valid, and those it serves broken. */
export function split(fake: FakeSource) {
  const truth = fake.truth();
  const broken = new Set(truth.invalidIds);
  return {
    broken,
    valid: truth.entities.filter((e) => !broken.has(e.id)),
    invalid: truth.entities.filter((e) => broken.has(e.id)),
  };
}

/** The latest modification time among `entities`. */
export function latest(entities: readonly { updatedAt: string }[]): string | null {
  return entities.reduce<string | null>(
    (max, e) => (max === null || e.updatedAt > max ? e.updatedAt : max),
    null,
  );
}

/**
 * The incremental run's touches: at the afterCommit of a planned page (before its successor is
 * enqueued), modify valid entities the run already committed. Each moves to the end of the
 * listing, so the run must read it once more: processed grows by exactly the touched count.
 */
export function touchBehindCursor(trial: Trial, touched: Set<string>) {
  const pending = [...trial.plan.touches];
  return async (point: StepPoint, context: StepContext): Promise<void> => {
    if (point !== 'afterCommit' || !pending.some((t) => t.afterPage <= context.page)) return;
    const run = await trial.env.deps.runs.require(context.runId);
    const cursor = run.checkpoint?.cursor;
    if (run.epoch !== context.epoch || run.checkpoint?.page !== context.page || !cursor) return;
    const key = decodeCursor(cursor);
    if (!key) return;
    const { valid } = split(trial.fake);
    for (const touch of pending.filter((t) => t.afterPage <= context.page)) {
      pending.splice(pending.indexOf(touch), 1);
      const behind = valid.filter(
        (e) =>
          !touched.has(e.id) && compareKeys({ updatedAtMs: Date.parse(e.updatedAt), id: e.id }, key) <= 0,
      );
      const ids = trial.rng.sample(behind, touch.count).map((e) => e.id);
      trial.fake.control.touch(ids);
      for (const id of ids) touched.add(id);
      trial.log(
        `touched ${ids.length} committed entities at afterCommit of page ${context.page}: ${ids.join(', ')}`,
      );
    }
  };
}

/**
 * The slow-worker fault: the first in-process worker to reach the planned step point (on the
 * planned page or a later one) stalls, alive, while its message is delivered again to another
 * worker — the copies race, and only one may count.
 */
export function slowWorker(trial: Trial) {
  let pending = trial.plan.slow;
  return async (point: StepPoint, context: StepContext): Promise<void> => {
    const slow = pending;
    if (!slow || point !== slow.point || context.page < slow.page) return;
    pending = null;
    const run = await trial.env.deps.runs.require(context.runId);
    const cursor = context.page === 1 ? null : run.checkpoint?.cursor;
    if (run.epoch !== context.epoch || run.nextPage !== context.page || cursor === undefined) return;
    const message = {
      v: 1 as const,
      runId: run.runId,
      sourceId: run.sourceId,
      epoch: run.epoch,
      page: context.page,
      cursor,
    };
    await trial.env.queue.redeliver(message);
    trial.log(
      `slow worker at ${point} of page ${context.page} (epoch ${context.epoch}) for ${slow.ms} ms; its message redelivered`,
    );
    await new Promise((resolve) => setTimeout(resolve, slow.ms));
  };
}
