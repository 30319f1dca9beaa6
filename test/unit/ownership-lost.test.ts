import { describe, expect, it } from 'vitest';
import type { SyncRun } from '../../lib/run/model.js';
import { OwnershipLostError } from '../../lib/store/errors.js';
import { explainRefusal } from '../../lib/store/refusals.js';

/*
 * A worker stops quietly on exactly the refusals that mean the run is no longer its own (the step
 * and the heartbeat catch OwnershipLostError); a duplicate or out-of-order page is not one of them.
 */

/** The fields explainRefusal reads of the run it judges by. */
function runAt(state: SyncRun['state'], epoch: number, nextPage: number): SyncRun {
  return { runId: 'r1', state, epoch, nextPage } as SyncRun;
}

describe('OwnershipLostError', () => {
  it.each([
    ['gone', undefined, 'RunNotFoundError'],
    ['cancelled', runAt('cancelled', 2, 5), 'RunCancelledError'],
    ['fenced by a newer epoch', runAt('running', 3, 5), 'RunFencedError'],
    ['finished', runAt('succeeded', 2, 5), 'RunFinishedError'],
  ])('is what a refusal is when the run is %s', (_, run, name) => {
    const error = explainRefusal('r1', run, { epoch: 2, page: 5 }, undefined);
    expect(error).toBeInstanceOf(OwnershipLostError);
    expect(error.name).toBe(name);
  });

  it.each([
    ['already committed', runAt('running', 2, 6), 'DuplicatePageError'],
    ['ahead of the chain', runAt('running', 2, 4), 'PageOutOfOrderError'],
  ])('is not what a refusal is when the page is %s', (_, run, name) => {
    const error = explainRefusal('r1', run, { epoch: 2, page: 5 }, undefined);
    expect(error).not.toBeInstanceOf(OwnershipLostError);
    expect(error.name).toBe(name);
  });
});
