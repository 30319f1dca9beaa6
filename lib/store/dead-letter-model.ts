import { createHash } from 'node:crypto';
import { REDACTED, redactCursor } from '../connectors/redact-url.js';
import { stringifyJson } from '../json/lossless.js';
import { wellFormed } from '../json/unicode.js';
import type { ErrorClass } from '../retry/errors.js';
import type { DeadLetterFilter } from '../run/dead-letter-filter.js';
import type { DeadLetterKind, DeadLetterState } from './dead-letter-kinds.js';

export type { DeadLetterFilter } from '../run/dead-letter-filter.js';

/*
 * What a dead letter is, apart from where it is stored: the entry, its scope, its discard, the
 * failure that files it, and the id and excerpt derived from a failure (the store is
 * dead-letters.ts).
 */

/**
 * The scope a failed source page was fetched in: retry-failed fetches it again the same way
 * (the original run's `since` and connector config), not as a page of today's unfiltered listing.
 */
export interface PageScope {
  readonly mode: string;
  readonly since: string | null;
  readonly connector?: string;
  readonly config?: Record<string, unknown>;
  /**
   * The API's MAC over `config` (the run snapshot's `configMac`): a retry sends a secret with the
   * scope's config only when it verifies, so a forged entry cannot steer where a secret goes.
   */
  readonly configMac?: string;
  /** A partition's page: the window of modification time its partition read. */
  readonly window?: { readonly from: string | null; readonly until: string | null };
}

/** One durable triage entry. */
export interface DeadLetter {
  readonly sourceId: string;
  readonly entryId: string;
  readonly kind: DeadLetterKind;
  /** Entity id (items) or page cursor (pages; `null` cursor is stored as the empty string). */
  readonly ref: string;
  readonly errorClass: ErrorClass;
  readonly reason: string;
  /** Attempts over all runs that tried it. */
  readonly attempts: number;
  readonly firstFailedAt: number;
  readonly lastFailedAt: number;
  /** The run of the last failure. */
  readonly runId: string;
  /** The page the failure happened on, in that run. */
  readonly page: number;
  /** A bounded excerpt of the payload, for triage. */
  readonly excerpt: string | null;
  /** Pages: the scope of the run that failed it (absent on entries recorded before scopes existed). */
  readonly scope?: PageScope;
  /** Items filed by a partition: its window's bounds (see {@link FailureRecord.windowUntil}). */
  readonly windowFrom?: string;
  readonly windowUntil?: string;
  /** `discarded` once someone gave up on the entry; absent while it is open. */
  readonly state?: DeadLetterState;
  /** The last discard: kept as the audit record, also after a new failure reopens the entry. */
  readonly discard?: Discard;
}

/** Who gave up on a dead letter, when and why. */
export interface Discard {
  readonly at: number;
  /** The caller's identity as the API knows it (an IAM ARN), or null when it has none (locally). */
  readonly by: string | null;
  readonly reason: string;
}

/**
 * A filter as conditions on an entry's own attributes, for a FilterExpression or, re-checked at
 * the write, a ConditionExpression (an entry that failed again differently in between no longer
 * matches). Values are named `:filter…`, apart from any other expression's.
 */
export function filterConditions(filter: DeadLetterFilter): {
  conditions: string[];
  values: Record<string, unknown>;
} {
  const conditions: string[] = [];
  const values: Record<string, unknown> = {};
  if (filter.runId !== undefined) {
    conditions.push('runId = :filterRun');
    values[':filterRun'] = filter.runId;
  }
  if (filter.errorClass !== undefined) {
    conditions.push('errorClass = :filterClass');
    values[':filterClass'] = filter.errorClass;
  }
  if (filter.reasonMatch !== undefined) {
    conditions.push('contains(reason, :filterReason)');
    values[':filterReason'] = filter.reasonMatch;
  }
  return { conditions, values };
}

/** An entry is open until it is discarded: counted in its run's "K in DLQ", listed, retried. */
export function isOpen(entry: Pick<DeadLetter, 'state'>): boolean {
  return entry.state === undefined;
}

/** A failure to record. */
export interface FailureRecord {
  readonly sourceId: string;
  readonly kind: DeadLetterKind;
  readonly ref: string;
  readonly errorClass: ErrorClass;
  readonly reason: string;
  readonly attempts: number;
  readonly runId: string;
  readonly page: number;
  readonly payload?: unknown;
  /** Pages: the scope to retry them in; kept as it is when a retry records a new failure without one. */
  readonly scope?: PageScope;
  /**
   * Items filed by one partition of a partitioned run: its window's bounds (absent when open). A
   * record that does not normalize sitting at a boundary is listed by the windows on both sides;
   * this tells the other one the record is already filed (and counted).
   */
  readonly windowFrom?: string;
  readonly windowUntil?: string;
  readonly now: number;
}

/** Longest excerpt kept of a failed payload: enough to triage, small enough never to threaten the item limit. */
export const EXCERPT_MAX_CHARS = 2_000;

/** Deterministic entry id: the same failure always lands on the same entry, so rewriting it is idempotent. */
export function deadLetterEntryId(kind: DeadLetterKind, ref: string): string {
  // Sort keys are limited to 1 KB; long refs (page URLs) are hashed. So are refs that carry a
  // credential (a next URL with a signature): the key is shown, and seals the API's list cursors.
  // A ref the worker scrubbed of a secret value is hashed as well: it stood for one. A ref that is
  // not well-formed UTF-16 (an entity id with a lone surrogate) has no UTF-8 form to key.
  return ref.length <= 200 && redactCursor(ref) === ref && !ref.includes(REDACTED) && wellFormed(ref) === ref
    ? `${kind}#${ref}`
    : `${kind}#sha256:${createHash('sha256').update(ref).digest('hex')}`;
}

export function excerptOf(payload: unknown): string | null {
  if (payload === undefined) return null;
  let text: string;
  try {
    // Lossless, so a record's 64-bit id reads in the excerpt as the source sent it.
    text = typeof payload === 'string' ? payload : stringifyJson(payload);
  } catch {
    text = String(payload);
  }
  // Well-formed, so that a lone surrogate in the payload, or a pair the clip cuts, cannot make the
  // dead letter itself unwritable.
  return wellFormed(text.length > EXCERPT_MAX_CHARS ? `${text.slice(0, EXCERPT_MAX_CHARS)}…` : text);
}

/**
 * Who may have filed an entry already, for `DeadLetterStore.recordUnlessFiledBy`: a window
 * of a partitioned run (`from`/`until`, its bounds), whose neighbours' filings are its own, or the
 * run's tail pass, for which every filing of the run is.
 */
export interface FiledBy {
  readonly runId: string;
  readonly from: string | null;
  readonly until: string | null;
  readonly tail: boolean;
}

/** The condition that the entry was not filed by `filer`'s run from a window next to it; undefined when none can be. */
export function filedByCondition(
  filer: FiledBy,
): { expression: string; values: Record<string, unknown> } | undefined {
  const values: Record<string, unknown> = { ':filerRun': filer.runId };
  if (filer.tail) return { expression: '(attribute_not_exists(runId) OR runId <> :filerRun)', values };
  const neighbours: string[] = [];
  if (filer.from !== null) {
    neighbours.push('windowUntil = :filerFrom');
    values[':filerFrom'] = filer.from;
  }
  if (filer.until !== null) {
    neighbours.push('windowFrom = :filerUntil');
    values[':filerUntil'] = filer.until;
  }
  if (neighbours.length === 0) return undefined;
  return { expression: `NOT (runId = :filerRun AND (${neighbours.join(' OR ')}))`, values };
}
