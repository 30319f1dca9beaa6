import { startRun } from '../lib/engine/index.js';
import { stableHash } from '../lib/run/hash.js';
import { SharedQuota, startFakeSource } from '../tools/fake-source/index.js';
import { freePorts } from '../tools/fake-source/ports.js';
import { round, setUpBench, sleep, waitForRun } from './setup.js';

/**
 * The `shared budget` phase: ten sources whose requests carry one token, against a fake GitHub
 * whose quota is keyed by token (`QUOTA.limit` requests per `QUOTA.windowSeconds`, GitHub's 403 +
 * `X-RateLimit-*` past it). All ten full runs start at once; the phase counts the requests the
 * source refused and compares the wall time with the quota-bound optimum.
 *
 * The numbers: 30 requests per 10 s (180 a minute) is well below what the local pipeline can
 * do against moto with 5-entity pages (~6 pages a second), so the quota, not the emulator, sets
 * the pace; 10 sources × 100 entities at 5 a page need ~210 requests, i.e. 7 windows: about
 * 70 s, with windows short enough that many resets happen within the phase.
 */
export const SHARED_BUDGET = {
  sources: 10,
  entitiesPerSource: 100,
  perPage: 5,
  quota: { limit: 30, windowSeconds: 10 },
  workers: 10,
} as const;

const TOKEN_REF = 'ssm:/org/bench-github-token';

/** Result of {@link runSharedBudget}. */
export interface SharedBudgetResult {
  readonly sources: number;
  readonly entitiesPerSource: number;
  readonly perPage: number;
  readonly quota: { readonly limit: number; readonly windowSeconds: number };
  /** Requests the source answered (refused ones excluded). */
  readonly requests: number;
  /** Requests the source refused for want of quota (403 with `X-RateLimit-Remaining: 0`). */
  readonly budgetRejected: number;
  /** From the first `startRun` until the last run ended. */
  readonly seconds: number;
  /**
   * The earliest the quota lets the last of `requests` go, from the same start: the first window
   * (which ends at its reset, part-way through) holds `limit`, each later one `limit` more.
   */
  readonly optimumSeconds: number;
  /** `seconds / optimumSeconds`. */
  readonly budgetVsOptimum: number;
  readonly allSucceeded: boolean;
  readonly failures: string[];
}

/**
 * The earliest time (seconds after `startMs`) at which a quota of `limit` per `windowMs` (windows
 * aligned to multiples of `windowMs`) admits its `requests`-th request.
 */
export function quotaBoundSeconds(
  requests: number,
  limit: number,
  windowMs: number,
  startMs: number,
): number {
  if (requests <= limit) return 0;
  const firstReset = (Math.floor(startMs / windowMs) + 1) * windowMs;
  const windowsAfterFirst = Math.floor((requests - 1) / limit) - 1;
  return (firstReset - startMs + windowsAfterFirst * windowMs) / 1_000;
}

/** Runs the phase on the emulator at `endpoint`. */
export async function runSharedBudget(endpoint: string): Promise<SharedBudgetResult> {
  const { sources, entitiesPerSource, perPage, quota: settings, workers } = SHARED_BUDGET;
  const [port] = await freePorts(1);
  const origin = `http://127.0.0.1:${port}`;
  // A shared secret is bound to explicit origins: the fake source's, chosen up front.
  const env = await setUpBench(endpoint, 'budget', {
    env: { SHARED_SECRET_REFS: JSON.stringify({ [TOKEN_REF]: [origin] }) },
    secrets: async () => 'bench-token',
  });
  const quota = new SharedQuota(settings);
  const fake = await startFakeSource({ entities: entitiesPerSource, seed: 5_150, latencyMs: 0, quota, port });
  try {
    const ids = Array.from({ length: sources }, (_, i) => `bench-budget-${i + 1}`);
    for (const [i, sourceId] of ids.entries()) {
      const connector = 'github-issues';
      const config = {
        owner: 'acme',
        repo: `repo-${i + 1}`,
        baseUrl: fake.url,
        tokenRef: TOKEN_REF,
        perPage,
      };
      await env.observer.sources.put(
        {
          sourceId,
          connector,
          config,
          schedules: [],
          configHash: stableHash({ connector, config }),
          // Signed as the API signs it: the worker resolves no secret for an unsigned config.
          configMac: await env.deps.trust.signConfig(sourceId, connector, config),
        },
        Date.now(),
      );
    }
    env.runtime({ workers }).start();
    // Start as a window opens: the quota's windows are aligned to multiples of its length, and a
    // first window cut short would charge the runs for a window no client could fill.
    const windowMs = settings.windowSeconds * 1_000;
    await sleep(windowMs - (Date.now() % windowMs) + 50);
    const startMs = Date.now();
    const started = await Promise.all(ids.map((sourceId) => startRun(env.deps, { sourceId, mode: 'full' })));
    const runs = await Promise.all(started.map((s) => waitForRun(env.observer, s.runId, { everyMs: 1_000 })));
    const endMs = Math.max(...runs.map((r) => r.finishedAt ?? Date.now()));
    const failures = runs
      .filter((r) => r.state !== 'succeeded' || r.progress.processed !== entitiesPerSource)
      .map((r) => `${r.sourceId}: ${r.state} with ${r.progress.processed} processed`);
    const seconds = round((endMs - startMs) / 1_000, 2);
    const optimumSeconds = round(quotaBoundSeconds(quota.admitted, settings.limit, windowMs, startMs), 2);
    return {
      sources,
      entitiesPerSource,
      perPage,
      quota: settings,
      requests: quota.admitted,
      budgetRejected: quota.rejected,
      seconds,
      optimumSeconds,
      budgetVsOptimum: round(seconds / Math.max(optimumSeconds, 0.001), 3),
      allSucceeded: failures.length === 0,
      failures,
    };
  } finally {
    await env.stop();
    await fake.stop();
  }
}
