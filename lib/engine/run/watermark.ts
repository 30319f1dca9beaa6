import { type Connector, type ConnectorManifest, hasStablePosition } from '../../connectors/contract.js';
import { stableHash } from '../../run/hash.js';
import type { RunMode, SyncRun } from '../../run/model.js';
import { type RunParams, runParams } from '../../run/params.js';
import type { SourceRecord, SourceWatermark } from '../../store/sources.js';
import type { EngineDeps } from '../deps.js';

/**
 * Watermark rules.
 *
 * - The watermark is a point such that every entity modified before it has been stored. It moves
 *   only when a run over a keyed stream succeeds: its value is the latest modification time the
 *   run read, capped at the time of any tie group read by position (see `connectors/keyset.ts`).
 *   Taken from the source's own timestamps, never from Harvester's clock, so clock skew between
 *   the two cannot open a gap.
 * - A run asks `since = watermark − lookback`: sources whose writes become visible out of
 *   timestamp order (replication, long transactions) are covered for that long. Re-reading a few
 *   seconds costs a few entities; version-guarded loads make them harmless.
 * - It belongs to the stream's identity (connector + the config fields selecting the stream): a
 *   source pointed at another repository starts without one.
 * - A successful `full` run over a keyed stream sets it too: it read every entity, so everything
 *   modified before the latest time it read has been stored.
 * - It never passes the time the run's listing started (minus the skew the source states): a
 *   record stamped hours ahead (a host with a fast clock, local time sent with a `Z`) would
 *   otherwise make every later incremental ask from then, and miss every edit until then. Such a
 *   record is stored, and counted as `ahead` in the run's progress.
 */

/** Hash of a stream's identity: the connector and the config fields that select the stream. */
export function streamHash(connector: Connector<unknown>, connectorName: string, config: unknown): string {
  return stableHash({
    connector: connectorName,
    stream: connector.streamIdentity ? connector.streamIdentity(config) : config,
  });
}

/** The later of two ISO versions (string order is time order for one fixed ISO format). */
export function laterVersion(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return a >= b ? a : b;
}

/** `version` moved back by `ms`, in the same ISO format; versions that are not ISO times stay as they are. */
export function minusLookback(version: string, ms: number): string {
  const time = Date.parse(version);
  if (Number.isNaN(time) || ms <= 0) return version;
  return new Date(time - ms).toISOString();
}

/**
 * What a starting run asks from: the source's watermark if it belongs to this stream and the
 * mode reads incrementally, moved back by the lookback. Null: read everything (and send no
 * `since` at all: some APIs answer an epoch `since` with an empty list).
 */
export function startingPoint(
  source: Pick<SourceRecord, 'watermark' | 'watermarkStream'>,
  stream: string,
  mode: RunMode,
  lookbackMs: number,
): { since: string | null; watermark: string | null } {
  if (mode !== 'incremental' || source.watermark === null || source.watermarkStream !== stream) {
    return { since: null, watermark: null };
  }
  return { since: minusLookback(source.watermark, lookbackMs), watermark: source.watermark };
}

/**
 * The `since` a page asks with: the run's, unless the run's config no longer selects the stream
 * it was chosen for (a restart adopted a reconfigured source): then everything.
 */
export function effectiveSince(connector: Connector<unknown>, params: RunParams): string | null {
  if (params.since === null) return null;
  if (params.stream === undefined || params.connector === undefined) return params.since;
  // The snapshot holds the source row's config as signed; the stream was hashed from it parsed.
  const parsed = connector.configSchema.safeParse(params.config);
  const config = parsed.success ? parsed.data : params.config;
  return params.stream === streamHash(connector, params.connector, config) ? params.since : null;
}

/** An ISO 8601 time, as the versions of streams ordered by modification time are. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

/** Epoch ms of a version that is an ISO time, else null (a revision counter, an ETag). */
function timeOf(version: string): number | null {
  if (!ISO_TIME.test(version)) return null;
  const time = Date.parse(version);
  return Number.isNaN(time) ? null : time;
}

/**
 * The latest time a run's watermark may name (epoch ms): when the run, and so its listing,
 * started, minus the clock skew its source states.
 */
export function clockCeilingMs(run: Pick<SyncRun, 'startedAt' | 'createdAt'>, skewMs = 0): number {
  return (run.startedAt ?? run.createdAt) - skewMs;
}

/**
 * `watermark`, or the clock ceiling when the watermark is a time past it, written as the
 * watermark was (whole seconds stay whole seconds, so string order stays time order).
 *
 * @example
 * capAtClock('2024-01-01T02:00:00Z', Date.parse('2024-01-01T00:00:10.500Z')); // '2024-01-01T00:00:10Z'
 */
export function capAtClock(watermark: string, ceilingMs: number): string {
  const time = timeOf(watermark);
  if (time === null || time <= ceilingMs) return watermark;
  // A watermark on a whole second (S3's times, GitHub's) is capped to one: down, never up, since
  // a lower watermark only re-reads.
  const whole = time % 1_000 === 0;
  const iso = new Date(whole ? Math.floor(ceilingMs / 1_000) * 1_000 : ceilingMs).toISOString();
  return /\.\d+/.test(watermark) ? iso : iso.replace(/\.\d{3}Z$/, 'Z');
}

/** How many of `versions` are times past the clock ceiling: records stamped ahead of the run. */
export function aheadOfClock(versions: readonly string[], ceilingMs: number): number {
  return versions.filter((version) => (timeOf(version) ?? Number.NEGATIVE_INFINITY) > ceilingMs).length;
}

/**
 * How many of a page's entities are stamped past the run's clock ceiling: stored like any
 * record, but counted in the run's progress, since their time proves nothing about the source.
 */
export function recordsAhead(
  run: Pick<SyncRun, 'startedAt' | 'createdAt'>,
  manifest: Pick<ConnectorManifest, 'clockSkewMs'>,
  entities: readonly { readonly version: string }[],
): number {
  return aheadOfClock(
    entities.map((e) => e.version),
    clockCeilingMs(run, manifest.clockSkewMs),
  );
}

/**
 * The watermark after one page: the later of what the run held and the page's latest version,
 * capped by the page's ceiling (a tie group read by position).
 */
export function pageWatermark(
  previous: string | null,
  versions: readonly string[],
  ceiling: string | null | undefined,
): string | null {
  const latest = versions.reduce<string | null>((max, v) => laterVersion(max, v), previous);
  if (ceiling === null || ceiling === undefined || latest === null) return latest;
  return latest <= ceiling ? latest : ceiling;
}

/** The watermark a run held before its first page: the source's, as the run started (not the lookback `since`). */
export function startingWatermark(params: RunParams): string | null {
  return params.watermark === undefined ? params.since : params.watermark;
}

/**
 * The watermark a succeeded run commits, with its stream; null when it must not move: modes that
 * do not read the whole stream (reconciliation, retry-failed), streams that are not keyed, or a
 * run that read nothing.
 */
export function finalWatermark(
  deps: EngineDeps,
  run: Pick<SyncRun, 'mode' | 'params' | 'startedAt' | 'createdAt'>,
  watermark: string | null,
): SourceWatermark | null {
  if (watermark === null || (run.mode !== 'incremental' && run.mode !== 'full')) return null;
  const params = runParams(run);
  if (params.connector === undefined || params.config === undefined) return null;
  const connector = deps.connectors.get(params.connector);
  const config = connector.configSchema.safeParse(params.config);
  if (!config.success) return null;
  const manifest = connector.manifestFor(config.data);
  if (!hasStablePosition(manifest)) return null;
  return {
    value: capAtClock(watermark, clockCeilingMs(run, manifest.clockSkewMs)),
    stream: streamHash(connector, params.connector, config.data),
  };
}
