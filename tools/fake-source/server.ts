import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createControl, type FakeSourceControl } from './control.js';
import { FakeSourceError } from './errors.js';
import { faultReply } from './fault-replies.js';
import { gitlabRateLimitHeaders } from './gitlab.js';
import { json, type Reply, readJson, requestKey, send } from './http.js';
import { LiveEditor, type LiveOptions } from './live.js';
import type { FaultProfile, FaultProfileName } from './profiles.js';
import { requestToken, type SharedQuota } from './quota.js';
import { matchRoute, type RouteMatch } from './routes.js';
import { type GroundTruth, SourceState } from './state.js';
import { type Stats, StatsRecorder } from './stats.js';
import { gzipped } from './traits/compression.js';
import { lengthHidden, padded } from './traits/oversize.js';
import type { TraitOptions } from './traits/schema.js';

/** Options of {@link startFakeSource}. */
export interface FakeSourceOptions {
  /** Port on 127.0.0.1 (never other interfaces). Default 0: a free port. */
  readonly port?: number;
  /** How many entities exist at start: `e-000001` … */
  readonly entities: number;
  /** Seed of everything random: text, broken entities, faults. Same seed, same source. */
  readonly seed: number;
  /** A fault profile or the name of one in `FAULT_PROFILES`. Default `none`. */
  readonly profile?: FaultProfile | FaultProfileName;
  /** Default `limit` of the rest-json listings. Default 100. (GitHub's `per_page` keeps GitHub's default, 30.) */
  readonly pageSize?: number;
  /** Replaces the profile's latency, also after `set-profile` (0 keeps a faulty profile fast in tests). */
  readonly latencyMs?: number;
  /** `updatedAt` of the first entity; the others follow one second apart. Default 2024-01-01T00:00:00.000Z. */
  readonly startAt?: string;
  /** Clock of rate-limit windows and headers. Default `Date.now`. */
  readonly now?: () => number;
  /** The `live` behaviour: edit, add and delete entities before listing requests. Default off. */
  readonly live?: LiveOptions;
  /**
   * Shared-quota mode: every source request spends the quota of the token it carries (several
   * fake sources may share one instance); past it, GitHub's 403 with `X-RateLimit-Remaining: 0`
   * (429 on the rest-json routes), and `X-RateLimit-*` of the token on every response. Default off.
   */
  readonly quota?: SharedQuota;
  /** The source zoo's behaviours of real APIs (see `traits/schema.ts`). Default: none. */
  readonly traits?: TraitOptions;
}

/** A running fake source. */
export interface FakeSource {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  readonly control: FakeSourceControl;
  /** Closes the server and every open connection, keep-alive ones included. Idempotent. */
  stop(): Promise<void>;
  /** What the source holds now (same as `GET /_truth`). */
  truth(): GroundTruth;
  /** What it has served so far (same as `GET /_stats`). */
  stats(): Stats;
}

const DEFAULT_START = '2024-01-01T00:00:00.000Z';

/**
 * Starts a fault-injecting fake source on 127.0.0.1.
 *
 * @example
 * const source = await startFakeSource({ entities: 250, seed: 7, profile: 'realistic', latencyMs: 0 });
 * const page = await fetch(`${source.url}/records?limit=100`).then((r) => r.json());
 * await source.stop();
 */
export async function startFakeSource(options: FakeSourceOptions): Promise<FakeSource> {
  const startAtMs = Date.parse(options.startAt ?? DEFAULT_START);
  const pageSize = options.pageSize ?? 100;
  if (!Number.isInteger(options.entities) || options.entities < 0)
    throw new FakeSourceError('entities must be an integer ≥ 0');
  if (!Number.isFinite(options.seed)) throw new FakeSourceError('seed must be a finite number');
  if (!Number.isInteger(pageSize) || pageSize < 1)
    throw new FakeSourceError('pageSize must be an integer ≥ 1');
  if (Number.isNaN(startAtMs)) throw new FakeSourceError('startAt must be an ISO 8601 time');

  const now = options.now ?? Date.now;
  const state = new SourceState(
    options.seed,
    options.entities,
    startAtMs,
    options.profile ?? 'none',
    now,
    options.traits,
  );
  const stats = new StatsRecorder();
  const live = new LiveEditor(state, options.seed);
  if (options.live) live.set(options.live);
  const control = createControl(state, stats, live);
  const sleeps = new Sleeps();

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // A bug in the fake must be loud in test output, yet not kill the test process.
      console.error('fake source: unhandled error', error);
      send(res, json(500, { message: 'fake source error' }), {});
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake-source');
    const query = url.searchParams;
    let match: ReturnType<typeof matchRoute>;
    try {
      match = matchRoute(req.method ?? 'GET', url.pathname);
    } catch {
      match = null;
    }
    if (match === null || match === 'method-not-allowed') {
      const reply = match
        ? json(405, { message: 'Method Not Allowed' })
        : json(404, { message: 'Not Found' });
      send(res, reply, state.faults.rateLimitHeaders());
      stats.record({
        route: 'unknown',
        status: reply.status,
        key: url.pathname,
        kind: 'unknown',
        faulted: false,
      });
      return;
    }
    const { route, params } = match;
    const key = requestKey(url.pathname, query);
    if (route.kind === 'admin') {
      const reply = await answerAdmin(match, req);
      send(res, reply, state.faults.rateLimitHeaders());
      stats.record({ route: route.name, status: reply.status, key, kind: 'admin', faulted: false });
      return;
    }
    stats.started();
    try {
      const admitted = options.quota?.admit(requestToken(req.headers));
      const verdict = state.faults.decide(key, url.pathname);
      const latencyMs = options.latencyMs ?? verdict.latencyMs;
      if (latencyMs > 0) await sleeps.sleep(latencyMs);
      const refused = admitted?.allowed === false;
      const faulted = refused || verdict.decision.kind !== 'none';
      const origin = `http://${req.headers.host ?? address}`;
      const ctx = { state, query, params, origin, path: url.pathname, pageSize };
      // The source changes between the request and its answer, as a live one does mid-run.
      if (route.kind === 'page' && !faulted) live.beforeListing();
      const quota = admitted?.headers ?? state.faults.rateLimitHeaders();
      // A rest-json source that names its reset another way (the `rateLimitReset` trait) sends only that.
      const ownFamily = route.shape === 'rest' && state.traits.current.rateLimitReset !== 'retry-after';
      const shaped = route.shape === 'gitlab' ? gitlabRateLimitHeaders(quota) : ownFamily ? {} : quota;
      let reply: Reply;
      if (refused) {
        // The refusal carries the token's own quota (a fault reply's stock limit would contradict it).
        const refusal = faultReply(
          route.shape,
          { kind: 'rate-limit-window', resetAtMs: quotaReset(quota) },
          now(),
          state.traits.current.rateLimitReset,
        );
        reply = { ...refusal, headers: { ...refusal.headers, ...shaped } };
      } else {
        reply = faulted
          ? faultReply(route.shape, verdict.decision, now(), state.traits.current.rateLimitReset)
          : route.handle!(ctx);
      }
      const traits = state.traits.current;
      const sized = padded(reply, traits);
      const encoded = traits.gzip ? gzipped(sized, req.headers['accept-encoding']) : sized;
      send(res, lengthHidden(encoded, traits), shaped);
      stats.record({ route: route.name, status: reply.status, key, kind: route.kind, faulted, refused });
    } finally {
      stats.finished();
    }
  }

  async function answerAdmin({ route }: RouteMatch, req: IncomingMessage): Promise<Reply> {
    if (route.name === 'truth') return json(200, state.truth());
    if (route.name === 'stats') return json(200, stats.snapshot());
    try {
      return json(200, control.apply(await readJson(req)));
    } catch (error) {
      return json(400, { message: error instanceof Error ? error.message : String(error) });
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;

  let stopped: Promise<void> | null = null;
  return {
    url: `http://${address}`,
    control,
    truth: () => state.truth(),
    stats: () => stats.snapshot(),
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // close() alone waits for idle keep-alive sockets to time out; a test suite must not.
        server.closeAllConnections();
        sleeps.wakeAll();
      });
      return stopped;
    },
  };
}

function quotaReset(headers: Record<string, string>): number {
  return Number(headers['x-ratelimit-reset']) * 1_000;
}

/** Latency sleeps that `stop()` can cut short, so no timer keeps the process alive after it. */
class Sleeps {
  private readonly pending = new Map<NodeJS.Timeout, () => void>();

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(timer);
        resolve();
      }, ms);
      this.pending.set(timer, resolve);
    });
  }

  wakeAll(): void {
    for (const [timer, resolve] of this.pending) {
      clearTimeout(timer);
      resolve();
    }
    this.pending.clear();
  }
}
