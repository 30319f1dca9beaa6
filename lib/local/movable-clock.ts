import type { Clock } from '../engine/deps.js';

/**
 * A clock that can be moved forward: every engine component reads the injected clock, so tests,
 * the chaos suite and the benchmark let the reaper see 90 s of silence (or 6 h of staleness)
 * without waiting for it.
 */
export interface MovableClock extends Clock {
  advance(ms: number): void;
}

export function movableClock(): MovableClock {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance: (ms) => {
      offset += ms;
    },
  };
}
