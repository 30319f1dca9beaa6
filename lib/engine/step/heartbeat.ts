import { OwnershipLostError } from '../../store/errors.js';
import type { EngineDeps } from '../deps.js';

/** A running heartbeat; {@link Heartbeat.signal} aborts when the run is lost to this worker. */
export interface Heartbeat {
  /** Aborted once a beat learns the worker was fenced, the run cancelled or ended. */
  readonly signal: AbortSignal;
  /** Why the signal aborted, if it did. */
  lost(): Error | undefined;
  /** Clears the timer. Always call it before returning: Lambda freezes timers between invocations. */
  stop(): void;
}

/**
 * Beats every {@link EngineDeps.limits.heartbeatIntervalMs} from a timer independent of the
 * retry loop, so a long in-attempt pause (a 60 s backoff) never looks like death.
 * A beat refused as fenced or cancelled aborts the signal, and the worker stops at its next step.
 * A beat that fails for another reason (a throttled write) is logged and retried next tick: one
 * missed beat is not death, three are.
 */
export function startHeartbeat(
  deps: EngineDeps,
  runId: string,
  epoch: number,
  /** A partition's worker beats on its partition; undefined: on the run. */
  partition?: number,
): Heartbeat {
  const controller = new AbortController();
  let reason: Error | undefined;
  let inFlight = false;
  const beat = async () => {
    if (inFlight || controller.signal.aborted) return;
    inFlight = true;
    try {
      await deps.chains.heartbeat({ runId, partition }, epoch, deps.clock.now());
    } catch (error) {
      if (error instanceof OwnershipLostError) {
        reason = error;
        controller.abort(error);
        deps.logger.warn('heartbeat refused; stopping', { runId, epoch, reason: error.name });
      } else {
        deps.logger.warn('heartbeat failed; will retry', { runId, epoch, error: String(error) });
      }
    } finally {
      inFlight = false;
    }
  };
  const timer = setInterval(() => void beat(), deps.limits.heartbeatIntervalMs);
  return {
    signal: controller.signal,
    lost: () => reason,
    stop: () => clearInterval(timer),
  };
}
