import type { Clock } from '../engine/index.js';

/**
 * A clock that can be moved forward: every engine component reads the injected clock, so tests,
 * the chaos suite and the benchmark let the reaper see 90 s of silence (or 6 h of staleness)
 * without waiting for it. It is real time plus an offset; worker processes of a local runtime can
 * follow it (see `clock-link.ts`).
 */
export interface MovableClock extends Clock {
  advance(ms: number): void;
  /** Back to real time (offset 0). */
  reset(): void;
  /** How far ahead of real time the clock is, in ms. */
  offsetMs(): number;
  /** Sets the offset: a worker process following its runtime's clock. */
  setOffset(ms: number): void;
  /** Calls `listener` with the new offset after every change; returns the unsubscribe. */
  onChange(listener: (offsetMs: number) => void): () => void;
}

export function movableClock(initialOffsetMs = 0): MovableClock {
  let offset = initialOffsetMs;
  const listeners = new Set<(offsetMs: number) => void>();
  const set = (ms: number) => {
    offset = ms;
    for (const listener of listeners) listener(offset);
  };
  return {
    now: () => Date.now() + offset,
    advance: (ms) => set(offset + ms),
    reset: () => set(0),
    offsetMs: () => offset,
    setOffset: set,
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
