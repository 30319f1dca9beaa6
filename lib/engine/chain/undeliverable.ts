import { createHash } from 'node:crypto';
import { METRIC } from '../../observability/metrics.js';
import type { PageMessage } from '../../queue/page-message.js';
import { UnsendableMessageError } from '../../queue/sendable.js';
import { chainAt } from '../../run/chains.js';
import { isActive } from '../../run/model.js';
import type { EngineDeps } from '../deps.js';
import { endRun } from '../run/finish.js';

/*
 * A page that cannot be delivered. Between a commit and the next delivery some
 * failures repeat identically on every attempt: a message the worker cannot read (not JSON, a
 * field out of bounds), a message SQS refuses (size, characters). Retrying, re-sending from the
 * reaper or restarting from scratch would only repeat them, so the run ends `failed` with
 * `page_undeliverable` as soon as one is known, its checkpoint kept: a person has to look.
 */

/** The failure reason of a run whose next page cannot be delivered. */
export const UNDELIVERABLE = 'page_undeliverable';

/** Thrown after the run was ended because its next page cannot be delivered: the caller stops. */
export class PageUndeliverableError extends Error {
  override readonly name = 'PageUndeliverableError';
}

/** Which page of which run a message is (or claims to be). */
type PageIdentity = Pick<PageMessage, 'runId' | 'epoch' | 'page' | 'partition'>;

/**
 * Sends `message` through `send`. When the message cannot be delivered at all, the run ends
 * `failed` (at the message's epoch) and {@link PageUndeliverableError} is thrown instead.
 */
export async function deliverOrFail<T>(
  deps: EngineDeps,
  message: PageMessage,
  send: () => Promise<T>,
): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof UnsendableMessageError)) throw error;
    await failUndeliverable(deps, message, error.message);
    throw new PageUndeliverableError(error.message, { cause: error });
  }
}

/**
 * Ends the run `failed` with {@link UNDELIVERABLE} when it is still active at the message's
 * epoch. Returns whether it did (a run that moved on, or ended, is left alone).
 */
export async function failUndeliverable(
  deps: EngineDeps,
  page: PageIdentity,
  problem: string,
): Promise<boolean> {
  const run = await deps.runs.get(page.runId);
  if (!run || !isActive(run.state) || run.epoch !== page.epoch) return false;
  const where =
    page.partition === undefined ? `page ${page.page}` : `page ${page.page} of partition ${page.partition}`;
  deps.logger.error('the next page cannot be delivered; the run ends failed', {
    runId: run.runId,
    sourceId: run.sourceId,
    epoch: run.epoch,
    page: page.page,
    ...(page.partition !== undefined ? { partition: page.partition } : {}),
    problem,
  });
  await endRun(deps, run, {
    epoch: run.epoch,
    state: 'failed',
    failure: {
      reason: UNDELIVERABLE,
      message: `${where} cannot be delivered: ${problem}. Sent again it would be refused again; the run stopped at its last checkpoint.`,
    },
  });
  return true;
}

/**
 * A page message nobody can read: filed in dead_letters under a digest of its body, and — when
 * it names the page its run expects next, at the run's epoch — that run ends `failed` (every
 * copy of the page is built from the same checkpoint, so every copy is unreadable). A body that
 * names no run, or a page the run has moved past, touches no run. Returns the entry and whether
 * a run was ended. With `onlyIfExpected`, a body that does not name its run's expected page is
 * left alone (undefined): the worker leaves it to the queue's redrive and the drain.
 */
export async function settleMalformed(
  deps: EngineDeps,
  body: string,
  problem: string,
  receiveCount: number,
  options: { readonly onlyIfExpected?: boolean } = {},
): Promise<{ entryId: string; endedRun: boolean } | undefined> {
  const named = namedPage(body);
  const expected = named !== undefined && (await expectsPage(deps, named));
  if (options.onlyIfExpected && !expected) return undefined;
  const digest = createHash('sha256').update(body).digest('hex').slice(0, 32);
  const entryId = await deps.deadLetters.record({
    sourceId: jsonField(body, 'sourceId') ?? UNKNOWN_SOURCE,
    kind: 'page',
    ref: `malformed:${digest}`,
    errorClass: 'permanent',
    reason: `malformed page message: ${problem}`,
    attempts: receiveCount,
    runId: jsonField(body, 'runId') ?? 'unknown',
    page: 0,
    payload: body,
    now: deps.clock.now(),
  });
  deps.metrics.count(METRIC.deadLetters, 1, { name: 'Kind', value: 'malformed' });
  deps.logger.error('malformed page message filed in dead_letters', { entryId, reason: problem });
  const endedRun = expected && (await failUndeliverable(deps, named, problem));
  return { entryId, endedRun };
}

/** A short string field of a JSON body, if it has one (a malformed body may still name its run and source). */
function jsonField(body: string, field: string): string | undefined {
  try {
    const value = (JSON.parse(body) as Record<string, unknown>)[field];
    return typeof value === 'string' && value.length > 0 && value.length <= 128 ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The source id under which messages that name no source are filed. */
export const UNKNOWN_SOURCE = '_unknown';

/** Whether the run expects exactly this page next (its chain's next page, at its epoch). */
async function expectsPage(deps: EngineDeps, page: PageIdentity): Promise<boolean> {
  const run = await deps.runs.get(page.runId);
  if (!run || run.epoch !== page.epoch) return false;
  const chain = chainAt(run, page.partition);
  return chain?.state === 'running' && chain.nextPage === page.page;
}

/** The run, epoch and page a malformed body names, read leniently; undefined when it names none. */
export function namedPage(body: string): PageIdentity | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof json !== 'object' || json === null) return undefined;
  const { runId, epoch, page, partition } = json as Record<string, unknown>;
  const short = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 128;
  const count = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
  if (!short(runId) || !count(epoch) || !count(page)) return undefined;
  if (partition !== undefined && !count(partition)) return undefined;
  return { runId, epoch, page, ...(partition !== undefined ? { partition } : {}) };
}
