import type { z } from 'zod';
import { CLI_COMMANDS } from '../config/cli-commands.js';
import type { EngineDeps } from '../engine/index.js';
import { RUN_MODES, type RunMode, type SyncRun } from '../run/model.js';
import { type Discard, isOpen } from '../store/dead-letter-model.js';
import { type DeadLetter, deadLetterEntryId } from '../store/dead-letters.js';
import type { StoredItem } from '../store/items.js';
import { type ItemView, toItemView } from './item-views.js';
import { iso } from './schemas/common.js';
import type { ItemExplanationSchema } from './schemas/items.js';
import { toDeadLetterView } from './views.js';

/** The answer of `GET /sources/{sourceId}/items/{entityId}/explain` (schema `ItemExplanation`). */
export type ItemExplanation = z.infer<typeof ItemExplanationSchema>;

/** Page dead letters shown when an entity is not stored: enough to triage, bounded. */
const FAILED_PAGES_SHOWN = 20;

/**
 * Why an entity is stored as it is, or not at all, from what the engine recorded: the item and
 * its provenance, the entity's open dead letter, the source's failed pages and watermark, and the
 * runs named on the row. Resolved dead letters leave the table; a version stored by a retry-failed
 * run is how a resolved one shows. A discarded one stays, with who gave up on it, when and why.
 */
export async function explainItem(
  deps: EngineDeps,
  sourceId: string,
  entityId: string,
): Promise<ItemExplanation> {
  const source = await deps.sources.require(sourceId);
  const [item, deadLetter] = await Promise.all([
    deps.items.get(sourceId, entityId),
    deps.deadLetters.get(sourceId, deadLetterEntryId('item', entityId)),
  ]);
  const [failedPages, shortRun] = item
    ? [[], null]
    : await Promise.all([openFailedPages(deps, sourceId), lastShortRun(deps, sourceId)]);
  const lastListed = item ? await lastListedOf(deps, item) : null;
  const view = item ? toItemView(item) : null;
  const status = statusOf(item, deadLetter);
  return {
    sourceId,
    entityId,
    status,
    summary: summaryOf(status, view, deadLetter, failedPages, source.watermark, shortRun),
    item: view,
    lastListed,
    tombstone:
      item?.tombstonedAt !== undefined
        ? { at: iso(item.tombstonedAt)!, runId: item.tombstonedBy ?? null }
        : null,
    deadLetters: deadLetter ? [toDeadLetterView(deadLetter)] : [],
    discard: deadLetter?.discard && !isOpen(deadLetter) ? discardView(deadLetter.discard) : null,
    failedPages: failedPages.map(toDeadLetterView),
    watermark: source.watermark,
    shortRun,
  };
}

/** Recent runs searched for a short completeness check: a bounded read, newest first. */
const RUNS_SEARCHED = 20;

/**
 * The newest ended full or reconciliation run among the source's last {@link RUNS_SEARCHED}
 * whose completeness check found the store short, unless a later such run verified it.
 */
async function lastShortRun(deps: EngineDeps, sourceId: string): Promise<ItemExplanation['shortRun']> {
  const { items } = await deps.runs.listBySource(sourceId, { limit: RUNS_SEARCHED });
  const checked = items.find((run) => run.completeness !== undefined);
  if (checked?.completeness?.verdict !== 'short') return null;
  const { completeness } = checked;
  return {
    runId: checked.runId,
    mode: checked.mode,
    shortBy: completeness.shortBy,
    reason: completeness.reason,
    heldAt: completeness.heldAt ?? null,
    finishedAt: iso(checked.finishedAt),
  };
}

function statusOf(
  item: StoredItem | undefined,
  deadLetter: DeadLetter | undefined,
): ItemExplanation['status'] {
  if (item?.tombstonedAt !== undefined) return 'tombstoned';
  if (item) return deadLetter ? 'stored_stale' : 'stored';
  if (!deadLetter) return 'never_listed';
  return isOpen(deadLetter) ? 'dead_lettered' : 'discarded';
}

function discardView(discard: Discard): NonNullable<ItemExplanation['discard']> {
  return { at: iso(discard.at)!, by: discard.by, reason: discard.reason };
}

/** `discarded by arn:… at 2026-…: "reason"` (no `by` locally, where the API knows no caller). */
function discardText(discard: Discard): string {
  return `discarded${discard.by ? ` by ${discard.by}` : ''} at ${iso(discard.at)}: "${discard.reason}"`;
}

/** Page entries sort after item entries (`page#…` > `item#…`): read from the first one on. */
async function openFailedPages(deps: EngineDeps, sourceId: string): Promise<DeadLetter[]> {
  const page = await deps.deadLetters.list(sourceId, {
    limit: FAILED_PAGES_SHOWN,
    cursor: deps.deadLetters.cursorAfter(sourceId, { entryId: 'page#' }),
  });
  return page.items.filter((entry) => entry.kind === 'page');
}

/**
 * The last run known to have listed the entity: the run that wrote the stored version, with its
 * page and fetch time, or a later one that marked the row (a reconciliation that found it alive
 * when confirming it by id; its mode read from the run, its page unknown). A run that listed it
 * unchanged leaves no mark on the row.
 */
async function lastListedOf(deps: EngineDeps, item: StoredItem): Promise<ItemExplanation['lastListed']> {
  const writer = item.provenance?.runId ?? item.runId;
  const listedBy = item.lastSeenRunId ?? writer;
  if (listedBy === writer) {
    const p = item.provenance;
    return {
      runId: writer,
      mode: modeOf(p?.mode) ?? modeOf((await deps.runs.get(writer))?.mode),
      page: p?.page ?? null,
      at: iso(p?.fetchedAt ?? item.syncedAt),
    };
  }
  const run: SyncRun | undefined = await deps.runs.get(listedBy);
  return { runId: listedBy, mode: modeOf(run?.mode), page: null, at: iso(run?.finishedAt ?? run?.startedAt) };
}

function modeOf(value: string | undefined): RunMode | null {
  return RUN_MODES.find((mode) => mode === value) ?? null;
}

function summaryOf(
  status: ItemExplanation['status'],
  item: ItemView | null,
  deadLetter: DeadLetter | undefined,
  failedPages: DeadLetter[],
  watermark: string | null,
  shortRun: ItemExplanation['shortRun'],
): string {
  const failure = deadLetter
    ? `dead-lettered with reason "${deadLetter.reason}" in run ${deadLetter.runId} (page ${deadLetter.page}, ${deadLetter.attempts} attempt${deadLetter.attempts === 1 ? '' : 's'}, last ${iso(deadLetter.lastFailedAt)})`
    : '';
  const given = deadLetter?.discard && !isOpen(deadLetter) ? `; ${discardText(deadLetter.discard)}` : '';
  const stored = item
    ? `version ${item.version} stored by ${item.provenance.mode ?? 'run'} run ${item.provenance.runId}${item.provenance.page === null ? '' : ` (page ${item.provenance.page})`} at ${item.provenance.storedAt}`
    : '';
  switch (status) {
    case 'stored':
      return `Stored: ${stored}.${item?.provenance.mode === 'dlq_retry' ? ' A retry-failed run recovered it.' : ''}`;
    case 'stored_stale':
      return `Stale: ${stored}; a later read of it was ${failure}${given}, so the stored version is older than the source's.`;
    case 'tombstoned':
      return `Tombstoned: reconciliation run ${item?.tombstonedBy ?? 'unknown'} found it gone from the source at ${item?.tombstonedAt}; the last version stored was ${item?.version}.`;
    case 'dead_lettered':
      return `Not stored: ${failure}. Retry failed (${CLI_COMMANDS.dlqRetry(deadLetter!.sourceId)}) fetches it again.`;
    case 'discarded':
      return `Not stored, given up: ${failure}${given}. Retries leave it alone; a new failure of it in a later run opens it again.`;
    case 'never_listed': {
      const since = watermark
        ? ` Incremental runs list only entities modified since the watermark ${watermark}.`
        : '';
      const pages =
        failedPages.length > 0
          ? ` ${failedPages.length} page${failedPages.length === 1 ? '' : 's'} of this source failed and may have held it: see failedPages.`
          : '';
      const short = shortRun
        ? ` The last checked ${shortRun.mode} run ${shortRun.runId} ended short by ${shortRun.shortBy} (${shortRun.reason ?? 'reason unknown'}): it may be one of them.${shortRun.heldAt ? '' : ' A reconciliation run reads the whole source again.'}`
        : '';
      return `Never listed: no run stored it or filed it as a dead letter, so the source never served it in a listing this engine read (it may not exist, may be filtered out by the source's config, or was created after the last run).${since}${pages}${short}`;
    }
  }
}
