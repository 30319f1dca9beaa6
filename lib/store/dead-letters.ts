import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { wellFormed } from '../json/unicode.js';
import { countFiledBy, countOpenOfRun } from './dead-letter-counts.js';
import type { DeadLetterKind, DeadLetterState } from './dead-letter-kinds.js';
import { type ListDeadLettersOptions, listDeadLetters, OPEN_FILTER } from './dead-letter-listing.js';
import {
  type DeadLetter,
  type DeadLetterFilter,
  type Discard,
  deadLetterEntryId,
  excerptOf,
  type FailureRecord,
  type FiledBy,
  filedByCondition,
  filterConditions,
  isOpen,
} from './dead-letter-model.js';
import { DeadLetterConflictError, isConditionFailure } from './errors.js';
import { batchGetAll, deleteAllQueried, encodeCursor, type Page } from './paging.js';
import { refusedItem } from './refused-item.js';

export { DEAD_LETTER_KINDS, DEAD_LETTER_STATES } from './dead-letter-kinds.js';
export type { ListDeadLettersOptions } from './dead-letter-listing.js';
export {
  type DeadLetter,
  type DeadLetterFilter,
  type Discard,
  deadLetterEntryId,
  EXCERPT_MAX_CHARS,
  type FailureRecord,
  type FiledBy,
  isOpen,
  type PageScope,
} from './dead-letter-model.js';
export type { DeadLetterKind, DeadLetterState };

/** The dead_letters repository. */
export class DeadLetterStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  /**
   * Records a failure. The entry is keyed by kind + ref; its attempt count grows once per
   * (run, page), so a redelivered page does not inflate it. Returns the entry id.
   */
  async record(failure: FailureRecord): Promise<string> {
    await this.write(failure);
    return deadLetterEntryId(failure.kind, failure.ref);
  }

  /**
   * Records a failure unless one of the run's neighbouring windows (or, for a tail pass, any pass
   * of the run) filed the same entry already, in one conditional write: two windows that list the
   * same boundary record at once cannot both count it. Returns whether this filing counts — true
   * also for a redelivered page that filed it before (its count was never committed).
   */
  async recordUnlessFiledBy(failure: FailureRecord, filer: FiledBy): Promise<boolean> {
    return (await this.write(failure, filedByCondition(filer))) !== 'guarded';
  }

  private async write(
    failure: FailureRecord,
    guard?: { expression: string; values: Record<string, unknown> },
  ): Promise<'written' | 'same_page' | 'guarded'> {
    const entryId = deadLetterEntryId(failure.kind, failure.ref);
    const failureKey = `${failure.runId}#${failure.page}`;
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { sourceId: failure.sourceId, entryId },
          UpdateExpression:
            'SET #kind = :kind, #ref = :ref, errorClass = :class, reason = :reason, lastFailedAt = :now, runId = :runId, #page = :page, excerpt = :excerpt, failureKey = :key, firstFailedAt = if_not_exists(firstFailedAt, :now), attempts = if_not_exists(attempts, :zero) + :attempts' +
            (failure.scope ? ', #scope = :scope' : '') +
            (failure.windowFrom ? ', windowFrom = :windowFrom' : '') +
            (failure.windowUntil ? ', windowUntil = :windowUntil' : '') +
            // A new failure is news: a discarded entry opens again (its last discard stays, for the record).
            ' REMOVE #state',
          ConditionExpression: guard
            ? `(attribute_not_exists(failureKey) OR failureKey <> :key) AND ${guard.expression}`
            : 'attribute_not_exists(failureKey) OR failureKey <> :key',
          ...(guard ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
          ExpressionAttributeNames: {
            '#kind': 'kind',
            '#ref': 'ref',
            '#page': 'page',
            '#state': 'state',
            ...(failure.scope ? { '#scope': 'scope' } : {}),
          },
          ExpressionAttributeValues: {
            ':kind': failure.kind,
            // The texts that describe a record are written well-formed: an id with a lone
            // surrogate is dead-lettered under a readable ref (its entry id hashes the original).
            ':ref': wellFormed(failure.ref),
            ':class': failure.errorClass,
            ':reason': wellFormed(failure.reason),
            ':now': failure.now,
            ':runId': failure.runId,
            ':page': failure.page,
            ':excerpt': excerptOf(failure.payload),
            ':key': failureKey,
            ':zero': 0,
            ':attempts': failure.attempts,
            ...(failure.scope ? { ':scope': failure.scope } : {}),
            ...(failure.windowFrom ? { ':windowFrom': failure.windowFrom } : {}),
            ...(failure.windowUntil ? { ':windowUntil': failure.windowUntil } : {}),
            ...guard?.values,
          },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // Same run and page recorded already: a redelivery; the entry is as it should be.
      if (!guard) return 'same_page';
      // Partitions number their pages alike: the same page is the same window's too.
      const old = refusedItem(error);
      const samePage =
        old?.failureKey === failureKey &&
        old.windowFrom === failure.windowFrom &&
        old.windowUntil === failure.windowUntil;
      return samePage ? 'same_page' : 'guarded';
    }
    return 'written';
  }

  async get(sourceId: string, entryId: string): Promise<DeadLetter | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { sourceId, entryId }, ConsistentRead: true }),
    );
    return Item as DeadLetter | undefined;
  }

  /** Deletes every entry of a source (the source was deleted). Returns how many. */
  async deleteAllOf(sourceId: string): Promise<number> {
    return deleteAllQueried(
      this.doc,
      {
        TableName: this.tableName,
        KeyConditionExpression: 'sourceId = :s',
        ExpressionAttributeValues: { ':s': sourceId },
        ProjectionExpression: 'sourceId, entryId',
        // An entry written a moment ago is deleted too.
        ConsistentRead: true,
      },
      (item) => ({ sourceId: item.sourceId, entryId: item.entryId }),
    );
  }

  /** Removes a resolved entry (a retry loaded it); a discarded one stays, as the audit record it is. */
  async resolve(sourceId: string, entryId: string): Promise<void> {
    try {
      await this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { sourceId, entryId },
          ConditionExpression: OPEN_FILTER,
          ExpressionAttributeNames: { '#state': 'state' },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  /**
   * Gives up on an open entry: it stays, as an audit record (state `discarded`, who, when, why),
   * and no longer counts, lists or retries as open. Conditional on the entry existing and being
   * open: a discarded one throws {@link DeadLetterConflictError}; a missing one (never recorded,
   * or resolved by a retry, which removes it) returns undefined.
   */
  async discard(sourceId: string, entryId: string, discard: Discard): Promise<DeadLetter | undefined> {
    try {
      const { Attributes } = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { sourceId, entryId },
          UpdateExpression: 'SET #state = :discarded, discard = :discard',
          ConditionExpression: `attribute_exists(entryId) AND ${OPEN_FILTER}`,
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':discarded': 'discarded', ':discard': discard },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes as DeadLetter;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const current = await this.get(sourceId, entryId);
      if (current?.discard && !isOpen(current)) throw new DeadLetterConflictError(entryId, current.discard);
      // Gone (resolved, or never there); an entry reopened in between is discarded on a new request.
      return undefined;
    }
  }

  /** Whether the source has an open item entry: one keys-only read of at most one key. */
  async hasOpenItems(sourceId: string): Promise<boolean> {
    const probe = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'sourceId = :s AND begins_with(entryId, :item)',
        ExpressionAttributeValues: { ':s': sourceId, ':item': 'item#' },
        ProjectionExpression: 'entryId',
        Limit: 1,
        // Decides whether the run looks for entries to resolve: a lagging "none" would leave open
        // the entries of entities the run then stores.
        ConsistentRead: true,
      }),
    );
    return (probe.Items ?? []).length > 0;
  }

  /**
   * Resolves the open item entries of entities that were just loaded: a later run that stores
   * an entity proves its old failure is over, so the entry leaves dead_letters (
   * dead letters are what is still wrong). A source with no open item entry costs one keys-only
   * read of one key; otherwise one batch read for the page's ids, and a delete per match,
   * conditional on the entry not having failed again since `loadedAt`. Returns the ids resolved.
   */
  async resolveLoaded(sourceId: string, entityIds: readonly string[], loadedAt: number): Promise<string[]> {
    if (entityIds.length === 0) return [];
    if (!(await this.hasOpenItems(sourceId))) return [];
    const ids = [...new Set(entityIds.map((id) => deadLetterEntryId('item', id)))];
    // Strongly consistent: a lagging read would miss an entry filed a moment ago, left open though its entity is stored.
    const found = await batchGetAll<{ entryId: string }>(
      this.doc,
      this.tableName,
      ids.map((entryId) => ({ sourceId, entryId })),
      { expression: 'entryId' },
    );
    const open = new Set(found.map((item) => item.entryId));
    const resolved: string[] = [];
    for (const entryId of open) {
      try {
        await this.doc.send(
          new DeleteCommand({
            TableName: this.tableName,
            Key: { sourceId, entryId },
            // Discarded entries stay: the audit record outlives the failure.
            ConditionExpression: `lastFailedAt <= :loadedAt AND ${OPEN_FILTER}`,
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':loadedAt': loadedAt },
          }),
        );
        resolved.push(entryId);
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    return resolved;
  }

  /**
   * How many entries are open whose last failure was in `runId`: the run's "K in DLQ", item and
   * page entries alike, counted where `dlq list --run` lists them, so the two always agree.
   */
  countOpen(sourceId: string, runId: string): Promise<number> {
    return countOpenOfRun(this.doc, this.tableName, sourceId, runId);
  }

  /** How many entries, open or discarded, have their last failure in `runId` (see {@link countFiledBy}). */
  countFiledBy(sourceId: string, runId: string): Promise<number> {
    return countFiledBy(this.doc, this.tableName, sourceId, runId);
  }

  /**
   * A cursor of {@link list} (by source) that continues right after `entry`; without one, a cursor
   * that starts before every entry of the source (entry ids are `kind#ref`, above a space).
   */
  cursorAfter(sourceId: string, entry?: Pick<DeadLetter, 'entryId'>): string {
    return encodeCursor({ sourceId, entryId: entry?.entryId ?? ' ' })!;
  }

  /**
   * Open entries of a source, a page at a time, optionally only those matching a filter (run,
   * error class, reason substring); with `state: 'discarded'`, the discarded ones instead (the
   * audit trail). See {@link listDeadLetters}.
   */
  list(sourceId: string, options: ListDeadLettersOptions = {}): Promise<Page<DeadLetter>> {
    return listDeadLetters(this.doc, this.tableName, sourceId, options);
  }

  /**
   * Discards an entry found by a bulk triage (`filter`), conditionally: only while it exists, is
   * open and still matches the filter. Returns false when it was discarded, resolved, or failed
   * again differently in between: skipped, left as it is.
   */
  async discardIfMatching(
    sourceId: string,
    entryId: string,
    filter: DeadLetterFilter,
    discard: Discard,
  ): Promise<boolean> {
    const { conditions, values } = filterConditions(filter);
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { sourceId, entryId },
          UpdateExpression: 'SET #state = :discarded, discard = :discard',
          ConditionExpression: ['attribute_exists(entryId)', OPEN_FILTER, ...conditions].join(' AND '),
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':discarded': 'discarded', ':discard': discard, ...values },
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return false;
    }
  }

  /** Every open entry of a source (for retry-failed snapshots and counts). */
  async listAll(sourceId: string): Promise<DeadLetter[]> {
    const all: DeadLetter[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.list(sourceId, { limit: 500, ...(cursor ? { cursor } : {}) });
      all.push(...page.items);
      cursor = page.cursor;
    } while (cursor);
    return all;
  }
}
