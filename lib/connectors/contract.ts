import type { S3Client } from '@aws-sdk/client-s3';
import type { z } from 'zod';
import type { Classification } from '../retry/errors.js';
import type { SincePrecision } from './source-timing.js';

/**
 * What a connector declares about its source. The engine's resume and continuation
 * decisions read it; nothing else about a source is hard-coded in the core.
 */
export interface ConnectorManifest {
  /** Registry name, referenced by sources: `github-issues`, `rest-json`. */
  readonly name: string;
  /** What one entity is: `issue`, `record`. */
  readonly entityType: string;
  /**
   * True when the stream is ordered by modification time *and stable under concurrent change*:
   * its position is a key (see `keyset.ts`) or a source cursor declared stable. Only such a stream
   * gets a watermark, a resume from its checkpoint, or a reconciliation that tombstones. May
   * depend on the config, see {@link Connector.manifestFor}.
   */
  readonly orderedByModifiedTime: boolean;
  /** True when the next cursor can be computed without the page's response (page-number pagination). */
  readonly cursorComputableWithoutResponse: boolean;
  /**
   * True when the stream is listed in a stable order by an immutable key that is *not* the
   * modification time (S3 object keys read with `StartAfter`). Such a position resumes exactly and
   * a complete listing may tombstone, as a keyed stream's does; but an edit does not move an
   * entity ahead of the position, so an incremental run lists every entity and loads only those
   * modified since the watermark, and its watermark is not the latest version read but the time
   * the listing began minus a clock-skew margin, which the connector states on every page
   * ({@link FetchedPage.watermark}). Default false.
   */
  readonly orderedByKey?: boolean;
  /**
   * How far before its watermark an incremental run asks (ms), for a source configured with its
   * own lookback (`watermarkLookbackSeconds`, see `source-timing.ts`). Absent: the stack's.
   */
  readonly watermarkLookbackMs?: number;
  /**
   * How far the source's clock may run ahead of Harvester's (ms), when its config states it: a
   * run's watermark stops that far before the time its listing started. Absent: 0.
   */
  readonly clockSkewMs?: number;
  /**
   * The finest time the source's `since` filter tells apart: `'s'` when it reads whole seconds.
   * Window boundaries are planned at it, and a page asks `since` at it. Absent: milliseconds.
   */
  readonly sincePrecision?: SincePrecision;
}

/**
 * True when a stream's position is stable under concurrent change (ordered by modification time
 * with a keyset position, or by an immutable key): only such a stream gets a watermark, a resume
 * from its checkpoint, or a reconciliation that tombstones.
 */
export function hasStablePosition(manifest: ConnectorManifest): boolean {
  return manifest.orderedByModifiedTime || manifest.orderedByKey === true;
}

/** SDK clients for sources that are AWS services, created by `lib/aws/clients.ts`. */
export interface ConnectorAwsClients {
  /** An S3 client for `region` (default: the stack's region); one per region, reused. */
  s3(region?: string): S3Client;
  /**
   * The account that must own every bucket read (sent as S3's `ExpectedBucketOwner`); undefined:
   * not checked (the local runtime).
   */
  readonly bucketOwner?: string;
}

/** Resolves a secret reference (an SSM parameter or Secrets Manager name) to its value. */
export interface SecretResolver {
  (reference: string): Promise<string>;
  /** Drops a cached value, so the next call reads the store (after the source rejected it). */
  invalidate?(reference: string): void;
}

/** What a connector may use while fetching. Connectors never touch DynamoDB, SQS or the retry loop. */
export interface ConnectorContext {
  /** The HTTP client (injected so tests and the benchmark can count or fake requests). */
  readonly fetch: typeof fetch;
  readonly secrets: SecretResolver;
  /** Incremental runs: only entities modified at or after this ISO time. Null: everything. */
  readonly since: string | null;
  readonly signal?: AbortSignal;
  /** SDK clients for AWS-service sources (`s3-objects`); absent where none are wired. */
  readonly aws?: ConnectorAwsClients;
  /**
   * One partition of a partitioned run reads only this window of modification time: its first
   * page starts at the later of `since` and `window.from`, and its stream ends before the first
   * entity modified at or after `window.until` (the connector keeps the bound in its cursor).
   * Absent: the whole stream. Only passed to connectors that implement {@link Connector.planWindows}.
   */
  readonly window?: TimeWindow;
}

/**
 * A window `[from, until)` of modification time (ISO 8601, the connector's version format) that
 * one partition of a run reads; a null bound is open. The last window of a run is open-ended, so
 * entities edited during the run (which move to the end of the stream) are read by it.
 */
export interface TimeWindow {
  readonly from: string | null;
  readonly until: string | null;
}

/** What the engine asks of {@link Connector.planWindows}. */
export interface WindowRequest {
  /** At most this many windows (the source's and the stack's partition bound, already applied). */
  readonly maxWindows: number;
  /** A window should hold at least this many entities; fewer entities in all → fewer windows. */
  readonly minEntitiesPerWindow: number;
}

/** Where a partitioned run splits its stream, chosen from the data. */
export interface WindowPlan {
  /**
   * Ascending modification times strictly after the listing's first entity: k − 1 boundaries for
   * k windows `[since, b1) [b1, b2) … [bk-1, ∞)`. Empty: the stream is not worth splitting.
   */
  readonly boundaries: readonly string[];
  /** Entities in the listing (from `since`) when the source tells, else null. */
  readonly total: number | null;
  /** Source requests the plan spent (they count against the source's rate budget like any other). */
  readonly requests: number;
}

/** A header a connector sends a secret in: `Authorization` carries `ssm:/harvester/acme/token`. */
export interface SecretCarrier {
  readonly reference: string;
  /** The header's name (compared without regard to case). */
  readonly header: string;
}

/**
 * Whose rate budget a source's requests spend: the origin they go to and the reference of the
 * secret they carry (null: none). Sources that return the same credential share one budget and
 * one concurrency cap, whichever run or partition sends the request.
 */
export interface CredentialScope {
  /** `https://api.github.com`: scheme, host and port of every request the source sends. */
  readonly origin: string;
  /** The secret reference (never its value) sent with the requests; null when none is sent. */
  readonly secretRef: string | null;
  /**
   * A budget the source is configured with, used until (and unless) the source's own rate-limit
   * headers say otherwise: `limit` requests per `windowSeconds`.
   */
  readonly configured?: { readonly limit: number; readonly windowSeconds: number } | undefined;
}

/** One fetched page. */
export interface FetchedPage {
  /** Raw records as the source sent them; {@link Connector.normalize} turns each into an entity. */
  readonly items: unknown[];
  /** Cursor of the next page; null when this was the last. */
  readonly nextCursor: string | null;
  /** Total entities of the run's listing when the source tells (a `total` field over a stable cursor). */
  readonly total?: number | null;
  /**
   * Entities this page and the pages after it will deliver, estimated from what the source tells
   * (GitHub's `rel="last"` × the page size observed, a `total` of a `since` listing). The engine
   * adds what the run already processed. Used when `total` is not given.
   */
  readonly remaining?: number | null;
  /**
   * The run's watermark must not pass this time (a tie group larger than a page was read by
   * position, see `keyset.ts`); null or absent: no cap.
   */
  readonly watermarkCeiling?: string | null;
  /**
   * The watermark the run may commit after this page, when the connector knows it better than the
   * versions it read: a stream ordered by key (see {@link ConnectorManifest.orderedByKey}) states
   * the time its listing began minus a clock-skew margin. When present it replaces the
   * latest-version rule; absent: the engine takes the latest version read (capped by the ceiling).
   */
  readonly watermark?: string | null;
}

/** A harvested entity, ready to store. */
export interface Entity {
  /** The source's id, unique within the source. */
  readonly id: string;
  /**
   * The source's modification time (ISO 8601) or revision; compared as a string, so ISO times
   * must be in one fixed format (UTC, same precision). Loads never put an older version over a newer one.
   */
  readonly version: string;
  readonly data: Record<string, unknown>;
}

/** Result of normalizing one raw record. */
export type Normalized =
  | { readonly ok: true; readonly entity: Entity }
  | { readonly ok: false; readonly reason: string; readonly ref: string | null };

/**
 * A connector: a zod-validated config plus four operations. `Config` is the parsed
 * config type of the connector's own schema.
 */
export interface Connector<Config = unknown> {
  readonly manifest: ConnectorManifest;
  readonly configSchema: z.ZodType<Config>;
  /** The manifest as it applies to one config (for example, `rest-json`'s `ordered` flag). */
  manifestFor(config: Config): ConnectorManifest;
  /**
   * The config fields that select the stream (which entities, which ids and versions), not how it
   * is read: the source watermark belongs to them, so pointing a source at another repository
   * starts without one, while changing a page size keeps it. Default: the whole config.
   */
  streamIdentity?(config: Config): unknown;
  /**
   * The credential whose rate budget the source's requests spend (see {@link CredentialScope}).
   * Absent or null: the source's requests are not budgeted (an AWS service, which throttles by
   * its own SDK retries).
   */
  credential?(config: Config): CredentialScope | null;
  /**
   * Which request header carries which secret reference, for a config. The origin check holds a
   * request sending one of these headers to the reference's binding whatever the header's value
   * looks like (an encoding no search would recognise), besides searching every request for the
   * values themselves. Absent: found by value only.
   */
  secretCarriers?(config: Config): readonly SecretCarrier[];
  /** Fetches the page at `cursor` (null: the first page, honouring `ctx.since`). */
  fetchPage(config: Config, cursor: string | null, ctx: ConnectorContext): Promise<FetchedPage>;
  /**
   * Fetches one entity by id (retry-failed runs, reconciliation's absence confirmations); throws a
   * classified error when it cannot. Throws `EntityGoneError` (see `gone.ts`) when the source says
   * the entity is no longer there — also when it answers with a record that lives elsewhere now
   * (another repository or project: a transferred issue), which only the connector can read. The
   * engine itself treats an answer whose id is not `id` as gone, never as a record to store.
   */
  fetchItem(config: Config, id: string, ctx: ConnectorContext): Promise<unknown>;
  /** Turns a raw record into an entity, or names why it is invalid. */
  normalize(config: Config, raw: unknown): Normalized;
  /**
   * Classifies any error thrown by fetchPage / fetchItem. `now` (epoch ms, default `Date.now()`)
   * turns absolute waits (an HTTP-date `Retry-After`, a rate-limit reset time) into durations;
   * the engine passes its injected clock so classification stays deterministic in tests.
   */
  classify(error: unknown, now?: number): Classification;
  /**
   * The cursor after `cursor` without its response; only when the manifest says it is
   * computable. Lets a run skip a dead-lettered page and continue.
   */
  nextCursorWithoutResponse?(config: Config, cursor: string | null): string | null;
  /**
   * Splits the listing from `ctx.since` into windows of similar size, chosen from the data (for
   * example the modification times found at evenly spaced positions of the listing, or a count of
   * entities since a time, bisected). Only for streams with a keyset position over modification
   * time; the engine then passes each partition its {@link ConnectorContext.window}. Absent: the
   * connector's runs are never partitioned.
   */
  planWindows?(config: Config, request: WindowRequest, ctx: ConnectorContext): Promise<WindowPlan>;
}
