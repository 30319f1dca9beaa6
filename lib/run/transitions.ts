import type { RunState } from './model.js';

/**
 * What can happen to a run. The store enforces each transition with a conditional write; this
 * table is the pure statement of the same rules, used by the engine and the API to decide
 * before they write and to explain a refusal.
 */
export const RUN_EVENTS = ['start', 'commit', 'defer', 'fence', 'succeed', 'fail', 'cancel'] as const;
export type RunEvent = (typeof RUN_EVENTS)[number];

const TRANSITIONS: Readonly<Record<RunEvent, Partial<Record<RunState, RunState>>>> = {
  // A worker takes a queued run.
  start: { queued: 'running' },
  // Progress and planned pauses only while running.
  commit: { running: 'running' },
  defer: { running: 'running' },
  // The reaper re-arms a silent run (or one whose first message was lost) under a new epoch.
  fence: { queued: 'running', running: 'running' },
  succeed: { running: 'succeeded' },
  // A run can fail before its first page (a crash loop on page 1, an invalid source).
  fail: { queued: 'failed', running: 'failed' },
  // Cancelled is terminal, and only active runs can be cancelled.
  cancel: { queued: 'cancelled', running: 'cancelled' },
};

/** Raised when an event does not apply to a run's state. */
export class InvalidTransitionError extends Error {
  override readonly name = 'InvalidTransitionError';
  constructor(
    readonly from: RunState,
    readonly event: RunEvent,
  ) {
    super(`a ${from} run cannot ${event}`);
  }
}

/** The state after `event`, or undefined when the event is not allowed in `from`. */
export function nextState(from: RunState, event: RunEvent): RunState | undefined {
  return TRANSITIONS[event][from];
}

/** Like {@link nextState} but throws {@link InvalidTransitionError} for a forbidden transition. */
export function transition(from: RunState, event: RunEvent): RunState {
  const to = nextState(from, event);
  if (to === undefined) throw new InvalidTransitionError(from, event);
  return to;
}

/** The states in which `event` is allowed: the store's condition expressions are built from this. */
export function statesAllowing(event: RunEvent): RunState[] {
  return Object.keys(TRANSITIONS[event]) as RunState[];
}
