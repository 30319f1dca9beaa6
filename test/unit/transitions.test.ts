import { describe, expect, it } from 'vitest';
import { RUN_STATES, type RunState } from '../../lib/run/model.js';
import {
  InvalidTransitionError,
  nextState,
  RUN_EVENTS,
  type RunEvent,
  transition,
} from '../../lib/run/transitions.js';

const ALLOWED: [RunState, RunEvent, RunState][] = [
  ['queued', 'start', 'running'],
  ['queued', 'fence', 'running'],
  ['queued', 'fail', 'failed'],
  ['queued', 'cancel', 'cancelled'],
  ['running', 'commit', 'running'],
  ['running', 'defer', 'running'],
  ['running', 'fence', 'running'],
  ['running', 'succeed', 'succeeded'],
  ['running', 'fail', 'failed'],
  ['running', 'cancel', 'cancelled'],
];

const FORBIDDEN: [RunState, RunEvent][] = RUN_STATES.flatMap((state) =>
  RUN_EVENTS.filter((event) => !ALLOWED.some(([s, e]) => s === state && e === event)).map(
    (event) => [state, event] as [RunState, RunEvent],
  ),
);

describe('run state machine', () => {
  it.each(ALLOWED)('a %s run can %s and becomes %s', (from, event, to) => {
    expect(nextState(from, event)).toBe(to);
    expect(transition(from, event)).toBe(to);
  });

  it.each(FORBIDDEN)('a %s run cannot %s', (from, event) => {
    expect(nextState(from, event)).toBeUndefined();
    expect(() => transition(from, event)).toThrow(InvalidTransitionError);
  });

  it('covers every state and event pair exactly once', () => {
    expect(ALLOWED.length + FORBIDDEN.length).toBe(RUN_STATES.length * RUN_EVENTS.length);
  });

  it.each(['succeeded', 'failed', 'cancelled'] as const)('%s is terminal: no event applies', (state) => {
    for (const event of RUN_EVENTS) expect(nextState(state, event)).toBeUndefined();
  });
});
