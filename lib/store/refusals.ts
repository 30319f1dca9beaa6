import type { SyncRun } from '../run/model.js';
import type { StoredChain } from './chain-item.js';
import {
  DuplicatePageError,
  PageOutOfOrderError,
  RunCancelledError,
  RunFencedError,
  RunFinishedError,
  RunNotFoundError,
  RunStateError,
  type StoreError,
} from './errors.js';

/** What a refused write expected: the writer's epoch, and the page it wrote for. */
export interface Expected {
  readonly epoch?: number | undefined;
  readonly page?: number;
}

/**
 * Names why a write on a run was refused, from the run read after the refusal. Order matters: a
 * cancelled run is reported as cancelled even to a zombie, so every worker learns to stop for
 * good; then a moved epoch (fenced), an ended run; then the page, judged against `position` (the
 * chain the write was for; by default the run's own).
 */
export function explainRefusal(
  runId: string,
  run: Pick<SyncRun, 'state' | 'epoch' | 'nextPage'> | undefined,
  expected: Expected,
  cause: unknown,
  chain?: { readonly name: string; readonly position: StoredChain | undefined },
): StoreError {
  const position = chain ? chain.position : run;
  const context = {
    runId,
    ...expected,
    ...(chain ? { chain: chain.name } : {}),
    ...(run ? { state: run.state, epoch: run.epoch, nextPage: position?.nextPage } : {}),
  };
  if (!run) return new RunNotFoundError(`run ${runId} not found`, context, { cause });
  if (run.state === 'cancelled')
    return new RunCancelledError(`run ${runId} was cancelled`, context, { cause });
  if (expected.epoch !== undefined && run.epoch !== expected.epoch) {
    return new RunFencedError(
      `run ${runId} moved to epoch ${run.epoch}; epoch ${expected.epoch} is fenced`,
      context,
      { cause },
    );
  }
  if (run.state === 'succeeded' || run.state === 'failed')
    return new RunFinishedError(`run ${runId} already ${run.state}`, context, { cause });
  const of = chain && chain.name !== 'run' ? ` of chain ${chain.name}` : '';
  if (expected.page !== undefined && run.state === 'running' && position) {
    const done = chain !== undefined && chain.position?.state === 'done';
    if (position.nextPage > expected.page || done) {
      return new DuplicatePageError(
        `page ${expected.page}${of} of run ${runId} is already committed`,
        context,
        {
          cause,
        },
      );
    }
    if (position.nextPage < expected.page) {
      return new PageOutOfOrderError(
        `run ${runId}${of} expects page ${position.nextPage}, not ${expected.page}`,
        context,
        { cause },
      );
    }
  }
  return new RunStateError(`run ${runId} is ${run.state}; the write does not apply`, context, { cause });
}
