import { RELIABILITY } from '../config/constants.js';
import type { SyncRun } from './model.js';

/**
 * What a silent heartbeat means. Silence means that no live worker holds a page,
 * not that the page waits in a backlogged queue or on a deferral:
 *
 * - `alive`: the holder beat within the silence threshold.
 * - `deferred`: a planned pause (`deferredUntil`) has not ended more than a threshold ago.
 * - `waiting`: the expected page was handed to the queue, the send was confirmed, and no worker
 *   has taken it since (a worker's first act on a page is a heartbeat that clears the handoff).
 *   The run is in the queue's care: no fence, no restart, no restart counted. `since` is when it
 *   became due.
 * - `resend`: the expected page was handed over but the send was not confirmed within
 *   `sendGraceMs` (the worker died or SQS failed between the commit and the send), or it has waited longer than
 *   `queueWaitResendMs` without any worker taking it. The page is sent again at the same epoch
 *   from the checkpoint; the commit condition makes a second copy harmless.
 * - `lost`: a worker took the page (cleared the handoff) and then went silent: a crash. Only this
 *   case is fenced and resumed or restarted by the resume policy.
 */
export type Silence =
  | { readonly kind: 'alive' }
  | { readonly kind: 'deferred'; readonly until: number }
  | { readonly kind: 'waiting'; readonly since: number }
  | { readonly kind: 'resend'; readonly reason: 'send_unconfirmed' | 'wait_exceeded'; readonly since: number }
  | { readonly kind: 'lost'; readonly silentSince: number };

/** The run fields the judgement reads. */
export type SilenceInput = Pick<SyncRun, 'heartbeatAt' | 'deferredUntil' | 'handoff' | 'nextPage'>;

/**
 * Judges a run's silence at `now`. Pure: the reaper acts on the verdict.
 * @example
 * judgeSilence({ heartbeatAt: t, deferredUntil: null, nextPage: 2, handoff: { page: 2, at: t, sentAt: t } }, t + 300_000)
 * // → { kind: 'waiting', since: t }
 */
export function judgeSilence(
  run: SilenceInput,
  now: number,
  limits: { silenceMs?: number; resendMs?: number; graceMs?: number } = {},
): Silence {
  const silenceMs = limits.silenceMs ?? RELIABILITY.silenceThresholdMs;
  const resendMs = limits.resendMs ?? RELIABILITY.queueWaitResendMs;
  const graceMs = limits.graceMs ?? RELIABILITY.sendGraceMs;
  if (now - run.heartbeatAt <= silenceMs) return { kind: 'alive' };
  if (run.deferredUntil !== null && run.deferredUntil > now - silenceMs)
    return { kind: 'deferred', until: run.deferredUntil };
  const handoff = run.handoff;
  if (handoff === null || handoff.page !== run.nextPage)
    return { kind: 'lost', silentSince: run.heartbeatAt };
  if (handoff.sentAt === null) {
    if (now - handoff.at <= graceMs) return { kind: 'waiting', since: handoff.at };
    return { kind: 'resend', reason: 'send_unconfirmed', since: handoff.at };
  }
  // A deferred page becomes due when its pause ends, not when it was scheduled.
  const since = Math.max(handoff.sentAt, run.deferredUntil ?? 0);
  if (now - since > resendMs) return { kind: 'resend', reason: 'wait_exceeded', since };
  return { kind: 'waiting', since };
}

/**
 * When the run last made progress: its last page commit, its (re)start, or its creation. The
 * progress budget counts from here — page 1 included, which has no checkpoint.
 */
export function lastProgressAt(
  run: Pick<SyncRun, 'checkpoint' | 'startedAt' | 'createdAt' | 'resume' | 'nextPage' | 'partitions'>,
): number {
  // A checkpoint left from before a restart from scratch (nextPage back to 1) is not progress of this pass.
  const committed = run.checkpoint && run.nextPage > 1 ? run.checkpoint.at : 0;
  // A partitioned run progresses whenever any of its partitions commits a page.
  const partitions = Object.values(run.partitions ?? {});
  const partitionCommitted = partitions.reduce((latest, p) => Math.max(latest, p.checkpoint?.at ?? 0), 0);
  return Math.max(committed, partitionCommitted, run.startedAt ?? run.createdAt, run.resume.at);
}
