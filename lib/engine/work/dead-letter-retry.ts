import pLimit from 'p-limit';
import { FETCHES_BY_ID_PER_STEP, RETRY_CONCURRENCY } from '../../config/constants.js';
import type { Entity, TimeWindow } from '../../connectors/contract.js';
import { secretReferences } from '../../connectors/secret-binding.js';
import { isUnidentified, unidentifiedRef } from '../../connectors/unidentified.js';
import type { RetryOutcome } from '../../retry/outcome.js';
import type { SyncRun } from '../../run/model.js';
import { runParams } from '../../run/params.js';
import type { DeadLetter, PageScope } from '../../store/dead-letters.js';
import type { Page } from '../../store/paging.js';
import { deferPage } from '../chain/deferral.js';
import type { EngineDeps } from '../deps.js';
import type { StepContext, StepResult } from '../step/context.js';
import { cursorOfRef } from '../step/page-scope.js';
import { fetchById } from './fetch-by-id.js';
import { fileItemDeadLetter } from './item-dead-letters.js';
import { commitAndContinue, fetchWithRetry, loadEntities } from './page-work.js';

/**
 * Dead letters one page of a dead-letter retry run takes: as many waves of re-fetches as fit one
 * invocation at their worst.
 */
export const DEAD_LETTER_RETRY_PAGE_SIZE = FETCHES_BY_ID_PER_STEP;

type EntryOutcome =
  | { readonly kind: 'resolved'; readonly entities: Entity[] }
  /** The entity is gone from the source (deleted, or moved away): its dead letter is over, nothing is stored. */
  | { readonly kind: 'gone'; readonly how: string }
  | {
      readonly kind: 'failed';
      readonly reason: string;
      readonly errorClass: 'transient' | 'permanent';
      readonly attempts: number;
    }
  | { readonly kind: 'defer'; readonly untilMs: number; readonly reason: string };

/**
 * The dead letters one page of a dead-letter retry run takes from `cursor`: those open when the
 * run started (and matching its filter, when it was started with one),
 * {@link DEAD_LETTER_RETRY_PAGE_SIZE} at a time. The page step and the page-DLQ drain list the
 * same slice, always from the table by source, consistently (a run filter included).
 */
export function listDeadLetterSlice(
  deps: EngineDeps,
  run: SyncRun,
  cursor: string | null,
): Promise<Page<DeadLetter>> {
  const params = runParams(run);
  return deps.deadLetters.list(run.sourceId, {
    limit: DEAD_LETTER_RETRY_PAGE_SIZE,
    cursor,
    failedBefore: params.deadLettersBefore ?? run.createdAt,
    ...params.deadLetterFilter,
    consistent: true,
  });
}

/**
 * A `dlq_retry` page: the next slice of the source's dead letters that were open
 * when the run started. Items are re-fetched by id, pages by cursor; resolved entries leave
 * dead_letters, failing ones stay with one more attempt and the new error. The cursor walks the
 * dead_letters table itself, so the run needs no snapshot and never moves a source cursor.
 */
export async function retryDeadLetterPage(context: StepContext): Promise<StepResult> {
  const { deps, run, message } = context;
  const slice = await listDeadLetterSlice(deps, run, message.cursor);
  const limit = pLimit(RETRY_CONCURRENCY);
  const outcomes = await Promise.all(
    slice.items.map((entry) => limit(() => retryDeadLetter(context, entry))),
  );
  context.ensureOwned();
  const firstDeferred = outcomes.findIndex((o) => o.kind === 'defer');
  const deferral = outcomes[firstDeferred];
  const settles = (o: EntryOutcome) => o.kind === 'resolved' || o.kind === 'gone';
  if (deferral?.kind === 'defer' && !outcomes.some((o, i) => settles(o) || i < firstDeferred)) {
    // Nothing came of the slice and an entry must wait longer than a worker may sleep: retry it later.
    return deferPage(context, deferral.untilMs, deferral.reason, 0);
  }
  // Entries before the first one that must wait (for a `Retry-After`, or its credential's rate
  // budget) are settled now and the next page starts at it, so a busy budget never makes the run
  // fetch the same entries again and again. After it, only recoveries count (they leave the
  // listing): a failure there is retried with the next slice rather than counted twice.
  const settled = firstDeferred === -1 ? outcomes.length : firstDeferred;
  const cursor =
    firstDeferred === -1
      ? (slice.cursor ?? null)
      : firstDeferred === 0
        ? (message.cursor ?? deps.deadLetters.cursorAfter(run.sourceId))
        : deps.deadLetters.cursorAfter(run.sourceId, slice.items[firstDeferred - 1]);
  const entities = outcomes.flatMap((o) => (o.kind === 'resolved' ? o.entities : []));
  const loaded = await loadEntities(context, entities);
  const resolved: DeadLetter[] = [];
  const gone: { entry: DeadLetter; how: string }[] = [];
  const failed: { entry: DeadLetter; outcome: Extract<EntryOutcome, { kind: 'failed' }> }[] = [];
  for (const [index, outcome] of outcomes.entries()) {
    const entry = slice.items[index]!;
    if (outcome.kind === 'resolved' && isSettledBy(entry, outcome.entities, loaded.stored))
      resolved.push(entry);
    else if (outcome.kind === 'gone') gone.push({ entry, how: outcome.how });
    else if (outcome.kind === 'failed' && index < settled) failed.push({ entry, outcome });
  }
  await context.checkpointHook('afterLoad');
  // Entries change in dead_letters only once this delivery's commit has won. Resolving earlier
  // would shift the slice a duplicate delivery of the same cursor lists, so entries recovered by
  // the losing copy would never be counted; recording a failure earlier would let a losing copy
  // re-create an entry the winner just resolved. A crash between the commit and these writes
  // leaves the entries open as they were; a retry-failed run restarts and retries them again.
  return commitAndContinue(
    context,
    {
      cursor,
      watermark: null,
      processed: loaded.loaded,
      errors: loaded.failed + failed.length,
      total: null,
      gone: gone.length,
    },
    async () => {
      for (const entry of resolved) await deps.deadLetters.resolve(run.sourceId, entry.entryId);
      for (const { entry, how } of gone) {
        // Resolved by a confirmed absence: nothing to store. The stored item, if any, stays as it
        // is until a reconciliation tombstones it; the log says why the entry left.
        await deps.deadLetters.resolve(run.sourceId, entry.entryId);
        context.log.warn('dead letter resolved: the entity is gone from the source', {
          entryId: entry.entryId,
          ref: entry.ref,
          how,
        });
      }
      for (const { entry, outcome } of failed) {
        await deps.deadLetters.record({
          sourceId: run.sourceId,
          kind: entry.kind,
          ref: entry.ref,
          errorClass: outcome.errorClass,
          reason: outcome.reason,
          attempts: outcome.attempts,
          runId: run.runId,
          page: message.page,
          now: deps.clock.now(),
        });
      }
    },
  );
}

/**
 * Whether a fetched entry leaves dead_letters: a page once fetched (its records that cannot be
 * stored are filed as item entries of their own by the load), an item only once it is stored.
 * An item still too large stays open: the load has just filed it again with this run's attempt.
 */
function isSettledBy(entry: DeadLetter, entities: readonly Entity[], stored: ReadonlySet<string>): boolean {
  return entry.kind === 'page' || entities.every((entity) => stored.has(entity.id));
}

/** A retried entry that could not be fetched: wait longer, or stay a dead letter with the new error. */
function unresolved(outcome: Exclude<RetryOutcome<unknown>, { kind: 'ok' }>): EntryOutcome {
  if (outcome.kind === 'defer') return { kind: 'defer', untilMs: outcome.untilMs, reason: outcome.reason };
  return {
    kind: 'failed',
    reason: outcome.reason,
    errorClass: outcome.errorClass,
    attempts: outcome.attempts,
  };
}

/**
 * The scope a failed page is retried in: the `since` and connector config of the run that
 * failed it, so the retry fetches the page that failed — not page N of today's unfiltered
 * listing. Entries recorded before scopes existed, or under another connector, use the retry
 * run's own config and no `since`. A scope config that references a secret is used only when its
 * MAC (the API's, copied from the failing run's snapshot) verifies: dead letters are written by
 * the run functions, so an unsigned config there could steer a secret; the retry run's own
 * config (verified before the step began) is used instead.
 */
async function originalScope(
  context: StepContext,
  entry: DeadLetter,
): Promise<{ since: string | null; config: unknown; window?: TimeWindow }> {
  const scope = entry.scope;
  if (!scope) return { since: null, config: context.config };
  const sameConnector = scope.connector === undefined || scope.connector === context.params.connector;
  const parsed =
    sameConnector && scope.config ? context.connector.configSchema.safeParse(scope.config) : undefined;
  const untrusted = parsed?.success ? await scopeProblem(context, scope) : undefined;
  if (untrusted) {
    context.log.warn('dead-letter scope not trusted; retrying with the source config', {
      entryId: entry.entryId,
      reason: untrusted,
    });
  }
  return {
    since: scope.since,
    config: parsed?.success && !untrusted ? parsed.data : context.config,
    // A partition's page is fetched within the window its partition read.
    ...(scope.window ? { window: scope.window } : {}),
  };
}

/** Why a scope's config may not be sent with a secret, or undefined when it may (or needs none). */
async function scopeProblem(context: StepContext, scope: PageScope): Promise<string | undefined> {
  if (secretReferences(scope.config).length === 0) return undefined;
  const connector = scope.connector ?? context.params.connector ?? context.connector.manifest.name;
  return context.deps.trust.configProblem(context.run.sourceId, connector, scope.config, scope.configMac);
}

async function retryDeadLetter(context: StepContext, entry: DeadLetter): Promise<EntryOutcome> {
  return entry.kind === 'item' ? retryItem(context, entry) : retryPage(context, entry);
}

async function retryItem(context: StepContext, entry: DeadLetter): Promise<EntryOutcome> {
  // A record the source served without an id cannot be fetched by one (a 404 would look gone).
  if (isUnidentified(entry.ref)) {
    return {
      kind: 'failed',
      reason: 'the record has no id to fetch it by: it stays open until the source serves it with one',
      errorClass: 'permanent',
      attempts: 1,
    };
  }
  const outcome = await fetchById(context, entry.ref);
  if (outcome.kind !== 'ok') return unresolved(outcome);
  if (outcome.value.kind === 'gone') return { kind: 'gone', how: outcome.value.how };
  const { normalized } = outcome.value;
  if (!normalized.ok) {
    return {
      kind: 'failed',
      reason: `invalid record: ${normalized.reason}`,
      errorClass: 'permanent',
      attempts: 1,
    };
  }
  return { kind: 'resolved', entities: [normalized.entity] };
}

async function retryPage(context: StepContext, entry: DeadLetter): Promise<EntryOutcome> {
  const outcome = await fetchWithRetry(context, cursorOfRef(entry.ref), await originalScope(context, entry));
  if (outcome.kind !== 'ok') return unresolved(outcome);
  const { deps, run, message } = context;
  const entities: Entity[] = [];
  for (const raw of outcome.value.items) {
    const normalized = context.connector.normalize(context.config, raw);
    if (normalized.ok) {
      entities.push(normalized.entity);
      continue;
    }
    // The page is recovered, but one of its records is invalid: it becomes an item entry of its own.
    await fileItemDeadLetter(context, {
      sourceId: run.sourceId,
      ref: normalized.ref ?? unidentifiedRef(raw),
      errorClass: 'permanent',
      reason: `invalid record: ${normalized.reason}`,
      attempts: 1,
      runId: run.runId,
      page: message.page,
      payload: raw,
      now: deps.clock.now(),
    });
  }
  return { kind: 'resolved', entities };
}
