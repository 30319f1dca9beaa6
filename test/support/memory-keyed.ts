import { z } from 'zod';
import type {
  Connector,
  ConnectorContext,
  WindowPlan,
  WindowRequest,
} from '../../lib/connectors/contract.js';
import { getConnector } from '../../lib/connectors/registry.js';
import type { ConnectorLookup } from '../../lib/engine/index.js';
import { type Classification, ClassifiedError } from '../../lib/retry/errors.js';

/**
 * An in-memory source with an exact keyset listing over `(updatedAt, id)`, and a connector over
 * it that implements time windows and `planWindows` — so the engine's partitioned runs can be
 * tested without any HTTP connector. The test controls the data (edits move an entity to the end
 * of the stream), the plan (boundaries from the data, or none), and faults (a page that fails).
 */

const BASE = Date.parse('2026-01-01T00:00:00.000Z');

interface Entity {
  id: string;
  updatedAt: string;
  value: number;
}

interface Position {
  at: string | null;
  id: string | null;
  until: string | null;
}

/** One in-memory source: its entities and what was asked of it. */
export class MemorySource {
  private readonly entities = new Map<string, Entity>();
  private tick = 0;
  /** Fetches served, by entity id: an entity served twice to one run shows up here. */
  readonly served = new Map<string, number>();
  /** Every page request's window and position, in order. */
  readonly requests: { window: ConnectorContext['window'] | undefined; cursor: string | null }[] = [];
  planCalls = 0;
  /** A fault: pages for which this returns a reason fail permanently. */
  failWhen:
    | ((position: Position, window: ConnectorContext['window'] | undefined) => string | undefined)
    | undefined;
  /** Called before every page fetch (a test can pause or crash here). */
  beforePage: ((window: ConnectorContext['window'] | undefined) => Promise<void> | void) | undefined;
  /** Boundaries the plan returns instead of computing them (null: computed from the data). */
  fixedPlan: string[] | null = null;
  /** Entities served broken: they do not normalize (dead-lettered by the run). */
  readonly invalid = new Set<string>();

  constructor(count: number) {
    for (let i = 0; i < count; i++) this.add();
  }

  private nextTime(): string {
    this.tick += 1;
    return new Date(BASE + this.tick * 1_000).toISOString();
  }

  /** Adds a new entity (at the end of the stream). */
  add(): Entity {
    const id = `m-${String(this.entities.size + 1).padStart(6, '0')}`;
    const entity = { id, updatedAt: this.nextTime(), value: 0 };
    this.entities.set(id, entity);
    return entity;
  }

  /** Edits an entity: its updatedAt moves to now, the end of the stream. */
  touch(id: string): Entity {
    const entity = this.entities.get(id);
    if (!entity) throw new Error(`no entity ${id}`);
    entity.updatedAt = this.nextTime();
    entity.value += 1;
    return entity;
  }

  /** The ground truth, in stream order. */
  truth(): Entity[] {
    return [...this.entities.values()].sort(compare).map((e) => ({ ...e }));
  }

  listing(position: Position): Entity[] {
    return this.truth().filter(
      (e) =>
        (position.at === null ||
          e.updatedAt > position.at ||
          (e.updatedAt === position.at && position.id !== null && e.id > position.id)) &&
        (position.until === null || e.updatedAt < position.until),
    );
  }
}

function compare(a: Entity, b: Entity): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const sources = new Map<string, MemorySource>();

/** Registers a source under `key`, for configs `{ key }`. */
export function memorySource(key: string, count: number): MemorySource {
  const source = new MemorySource(count);
  sources.set(key, source);
  return source;
}

const ConfigSchema = z.object({
  key: z.string(),
  pageSize: z.number().int().positive().default(10),
  /** false: no windows (the connector is not keyed over modification time), for runs that must stay single. */
  ordered: z.boolean().default(true),
  /** Characters of filler every cursor carries: a source whose tokens are long (a keyset position naming long ids). */
  cursorPadding: z.number().int().min(0).default(0),
});
type Config = z.infer<typeof ConfigSchema>;

function encode(position: Position, padding = 0): string {
  const token = `mk.${Buffer.from(JSON.stringify(position)).toString('base64url')}`;
  return padding > 0 ? `${token}.${'p'.repeat(padding)}` : token;
}

function decode(cursor: string | null, ctx: ConnectorContext): Position {
  if (cursor === null) {
    const from = ctx.window?.from ?? null;
    const since = ctx.since;
    const at = from === null ? since : since === null || from > since ? from : since;
    // A window starts at `from` inclusive: the position is just before it.
    return { at: at === null ? null : justBefore(at), id: null, until: ctx.window?.until ?? null };
  }
  return JSON.parse(Buffer.from(cursor.slice(3).split('.')[0]!, 'base64url').toString()) as Position;
}

function justBefore(iso: string): string {
  return new Date(Date.parse(iso) - 1).toISOString();
}

/** The connector: `memory-keyed`. */
export const memoryKeyedConnector: Connector<Config> = {
  manifest: {
    name: 'memory-keyed',
    entityType: 'record',
    orderedByModifiedTime: true,
    cursorComputableWithoutResponse: false,
  },
  configSchema: ConfigSchema as unknown as z.ZodType<Config>,
  manifestFor: (config) => ({ ...memoryKeyedConnector.manifest, orderedByModifiedTime: config.ordered }),
  async fetchPage(config, cursor, ctx) {
    const source = sources.get(config.key)!;
    source.requests.push({ window: ctx.window, cursor });
    await source.beforePage?.(ctx.window);
    const position = decode(cursor, ctx);
    const reason = source.failWhen?.(position, ctx.window);
    if (reason) throw new ClassifiedError('permanent', reason);
    const listing = source.listing(position);
    const page = listing.slice(0, config.pageSize);
    for (const e of page) source.served.set(e.id, (source.served.get(e.id) ?? 0) + 1);
    const last = page.at(-1);
    const more = listing.length > page.length;
    return {
      items: page,
      nextCursor:
        more && last
          ? encode({ at: last.updatedAt, id: last.id, until: position.until }, config.cursorPadding)
          : null,
      remaining: listing.length,
    };
  },
  async fetchItem(config, id) {
    const entity = sources
      .get(config.key)!
      .truth()
      .find((e) => e.id === id);
    if (!entity) throw new ClassifiedError('permanent', 'gone');
    return entity;
  },
  normalize(config, raw) {
    const e = raw as Entity;
    if (sources.get(config.key)?.invalid.has(e.id))
      return { ok: false, reason: 'broken on purpose', ref: e.id };
    return { ok: true, entity: { id: e.id, version: e.updatedAt, data: { value: e.value } } };
  },
  classify(error): Classification {
    if (error instanceof ClassifiedError) return { errorClass: error.errorClass, reason: error.message };
    return { errorClass: 'transient', reason: String(error) };
  },
  async planWindows(config, request: WindowRequest, ctx): Promise<WindowPlan> {
    const source = sources.get(config.key)!;
    source.planCalls += 1;
    const listing = source.listing({
      at: ctx.since === null ? null : justBefore(ctx.since),
      id: null,
      until: null,
    });
    if (source.fixedPlan) return { boundaries: source.fixedPlan, total: listing.length, requests: 1 };
    const k = Math.min(request.maxWindows, Math.floor(listing.length / request.minEntitiesPerWindow));
    const boundaries: string[] = [];
    for (let i = 1; i < k; i++) boundaries.push(listing[Math.floor((i * listing.length) / k)]!.updatedAt);
    return { boundaries, total: listing.length, requests: 1 };
  },
};

/** A connector lookup that knows `memory-keyed` besides the registry's connectors. */
export const withMemoryKeyed: ConnectorLookup = {
  get: (name) =>
    name === 'memory-keyed' ? (memoryKeyedConnector as Connector<unknown>) : getConnector(name),
};
