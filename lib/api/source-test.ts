import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { secretReferences } from '../connectors/secret-binding.js';
import { createSecretScrubber } from '../connectors/secret-scrub.js';
import type { EngineDeps } from '../engine/index.js';
import { connectorSecrets, RateBudgetWaitError, spendingFetch } from '../engine/index.js';
import { scrubbedLogger } from '../observability/scrubbed-logger.js';
import { SourceResponseError } from '../retry/errors.js';
import { MAX_CONCURRENT_SOURCE_TESTS } from '../store/source-test-leases.js';
import type { SourceRecord } from '../store/sources.js';
import { SourceTestsBusyError } from './errors.js';

/**
 * A connection check of a source (`POST /sources/{id}/test`, `harvester sources test`): fetch
 * its first page once, with its real credentials, exactly as a run would, and report what an
 * administrator needs before starting a run: did the source accept the credentials, how much
 * rate budget is left, and what one entity looks like after normalization. Nothing is stored
 * and no run is started; no retries (a transient failure is reported as such). Its request takes
 * from the credential's rate budget like a run's (lib/engine/sources/rate-budget.ts), so checks cannot
 * spend a quota the runs are pacing.
 */

/** Rate-limit headers the common APIs send (GitHub, GitLab, most REST APIs). */
const RATE_HEADERS = {
  limit: ['x-ratelimit-limit', 'ratelimit-limit'],
  remaining: ['x-ratelimit-remaining', 'ratelimit-remaining'],
  reset: ['x-ratelimit-reset', 'ratelimit-reset'],
} as const;

/** The result of a connection check. */
export const SourceTestResultSchema = z
  .object({
    ok: z.boolean().meta({ description: 'The first page was fetched and at least parsed' }),
    sourceId: z.string(),
    connector: z.string(),
    request: z.object({
      url: z.string().nullable().meta({ description: 'Origin and path of the last request (no query)' }),
      status: z.number().int().nullable(),
      durationMs: z.number().int(),
    }),
    auth: z.enum(['accepted', 'refused', 'not_configured', 'unknown']).meta({
      description:
        '`accepted`: credentials were sent and the source answered; `refused`: 401/403 that is not a rate limit',
    }),
    rateLimit: z
      .object({
        limit: z.number().nullable(),
        remaining: z.number().nullable(),
        resetAt: z.string().nullable(),
      })
      .nullable()
      .meta({ description: "The source's rate-limit headers, when it sends them" }),
    page: z
      .object({ items: z.number().int(), total: z.number().int().nullable(), hasNextPage: z.boolean() })
      .nullable(),
    sample: z
      .object({ id: z.string(), version: z.string(), data: z.record(z.string(), z.unknown()) })
      .nullable()
      .meta({ description: 'The first entity of the page, normalized' }),
    invalidOnPage: z
      .number()
      .int()
      .meta({ description: 'Records of the page that would become dead letters' }),
    problem: z
      .object({ errorClass: z.enum(['transient', 'permanent']), reason: z.string() })
      .nullable()
      .meta({ description: 'Why the check failed, classified as a run would classify it' }),
  })
  .meta({ id: 'SourceTestResult' });

/** A connection check's result. */
export type SourceTestResult = z.infer<typeof SourceTestResultSchema>;

function numberHeader(headers: Headers, names: readonly string[]): number | null {
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  }
  return null;
}

/**
 * Longest a connection check gives the source, budget wait, connection, answer and body
 * included. A check answers a person at a terminal, and each one holds a function instance (on
 * AWS the check function's, and the API's that waits for it) for as long as it lasts: a few
 * seconds tell whether the source answers at all, and keep a flood of checks against a slow host
 * (60 s per answer) from holding the account's Lambda capacity. A run's request waits longer
 * (`RELIABILITY.requestTimeoutMs`), with retries.
 */
export const SOURCE_TEST_TIMEOUT_MS = 5_000;

/** Longest a check waits for the credential's rate budget (inside {@link SOURCE_TEST_TIMEOUT_MS}). */
export const SOURCE_TEST_BUDGET_WAIT_MS = 2_000;

/**
 * How long a check holds its slot (lib/store/source-test-leases.ts): longer than the check can
 * run at all — on AWS its function's timeout (15 s, a stack template test holds the two apart) —
 * so a slot lapses only once its check is surely over.
 */
export const SOURCE_TEST_LEASE_MS = 20_000;

function usesCredentials(config: unknown): boolean {
  return secretReferences(config).length > 0;
}

function refusedResult(source: SourceRecord, reason: string): SourceTestResult {
  return {
    ok: false,
    sourceId: source.sourceId,
    connector: source.connector,
    request: { url: null, status: null, durationMs: 0 },
    auth: 'unknown',
    rateLimit: null,
    page: null,
    sample: null,
    invalidOnPage: 0,
    problem: { errorClass: 'permanent', reason },
  };
}

/**
 * Fetches the source's first page once and reports on it, holding one of the source's check
 * slots meanwhile.
 *
 * @throws SourceTestsBusyError when the source already has its most checks running (429).
 */
export async function testSource(deps: EngineDeps, source: SourceRecord): Promise<SourceTestResult> {
  const leases = deps.sourceTestLeases;
  if (!leases) return checkSource(deps, source);
  const lease = await leases.acquire(source.sourceId, randomUUID(), deps.clock.now(), SOURCE_TEST_LEASE_MS);
  if (!lease)
    throw new SourceTestsBusyError(
      source.sourceId,
      MAX_CONCURRENT_SOURCE_TESTS,
      Math.ceil(SOURCE_TEST_TIMEOUT_MS / 1_000),
    );
  try {
    return await checkSource(deps, source);
  } finally {
    await leases.release(lease, source.sourceId, deps.clock.now()).catch((error: unknown) => {
      // The slot lapses on its own a few seconds later; the check's answer is still good.
      deps.logger.warn('could not give back a connection check slot', { error: String(error) });
    });
  }
}

async function checkSource(deps: EngineDeps, source: SourceRecord): Promise<SourceTestResult> {
  const connector = deps.connectors.get(source.connector);
  const config = connector.configSchema.parse(source.config);
  const credentials = usesCredentials(config);
  // The row is read back from the table: trust it with a secret only if the API signed it.
  const untrusted = credentials
    ? await deps.trust.configProblem(source.sourceId, source.connector, source.config, source.configMac)
    : undefined;
  if (untrusted) return refusedResult(source, untrusted);
  let last: { url: string; status: number; headers: Headers } | undefined;
  // The request sent, answered or not: a refused connection still names where it went.
  let sent: string | undefined;
  const observing: typeof fetch = async (input, init) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    sent = `${url.origin}${url.pathname}`;
    const response = await deps.fetch(input, init);
    last = { url: sent, status: response.status, headers: response.headers };
    return response;
  };
  const started = deps.clock.now();
  const base = {
    sourceId: source.sourceId,
    connector: source.connector,
    request: () => ({
      url: last?.url ?? sent ?? null,
      status: last?.status ?? null,
      durationMs: Math.max(0, deps.clock.now() - started),
    }),
    rateLimit: () => {
      if (!last) return null;
      const limit = numberHeader(last.headers, RATE_HEADERS.limit);
      const remaining = numberHeader(last.headers, RATE_HEADERS.remaining);
      const reset = numberHeader(last.headers, RATE_HEADERS.reset);
      if (limit === null && remaining === null && reset === null) return null;
      // GitHub sends epoch seconds; the IETF draft sends seconds from now.
      const resetAt =
        reset === null
          ? null
          : new Date(reset > 1e9 ? reset * 1_000 : deps.clock.now() + reset * 1_000).toISOString();
      return { limit, remaining, resetAt };
    },
  };
  const signal = AbortSignal.timeout(SOURCE_TEST_TIMEOUT_MS);
  // One scrubber for the check: its answer and its log lines never hold a value it resolved.
  const scrubber = createSecretScrubber();
  // Like a run's, the check's request spends the credential's rate budget; a check is not worth a
  // long wait, so a budget spent for longer than a short pause is reported, not waited out.
  const budgeted = spendingFetch(connector, config, {
    deps: { ...deps, fetch: observing },
    log: scrubbedLogger(deps.logger, scrubber.scrub),
    ensureOwned: () => signal.throwIfAborted(),
    sleep: deps.retry.sleep,
    budget: { arrived: undefined, pending: undefined },
    maxInlineWaitMs: SOURCE_TEST_BUDGET_WAIT_MS,
  });
  // Secrets bound to their origins, checked per request, and scrubbed from whatever is answered;
  // a request refused for its secret spends no budget.
  const bound = connectorSecrets(
    deps,
    source.sourceId,
    budgeted,
    scrubber,
    connector.secretCarriers?.(config),
  );
  try {
    const page = await connector.fetchPage(config, null, {
      fetch: bound.fetch,
      secrets: bound.secrets,
      since: null,
      signal,
    });
    const results = page.items.map((raw) => connector.normalize(config, raw));
    const first = results.find((r) => r.ok);
    return {
      ok: true,
      sourceId: base.sourceId,
      connector: base.connector,
      request: bound.scrub(base.request()),
      auth: credentials ? 'accepted' : 'not_configured',
      rateLimit: base.rateLimit(),
      page: { items: page.items.length, total: page.total ?? null, hasNextPage: page.nextCursor !== null },
      sample: first?.ok ? bound.scrub({ ...first.entity }) : null,
      invalidOnPage: results.filter((r) => !r.ok).length,
      problem: null,
    };
  } catch (error) {
    const classification =
      error instanceof RateBudgetWaitError
        ? { errorClass: 'transient' as const, reason: error.message }
        : signal.aborted
          ? { errorClass: 'transient' as const, reason: timedOut(last !== undefined) }
          : wrongShape(error, last?.status)
            ? {
                errorClass: 'permanent' as const,
                reason: `${(error as Error).message}: the source answered ${last?.status}, so the config, not the source, is wrong (check \`itemsPath\`)`,
              }
            : connector.classify(error, deps.clock.now());
    const status = last?.status ?? null;
    const refused = (status === 401 || status === 403) && classification.errorClass === 'permanent';
    return {
      ok: false,
      sourceId: base.sourceId,
      connector: base.connector,
      request: bound.scrub(base.request()),
      // A 401 to a config without credentials is not a refusal of credentials: none were sent.
      auth: !credentials ? 'not_configured' : refused ? 'refused' : 'unknown',
      rateLimit: base.rateLimit(),
      page: null,
      sample: null,
      invalidOnPage: 0,
      problem: { errorClass: classification.errorClass, reason: bound.scrub(classification.reason) },
    };
  }
}

/** Why a check that ran out of time failed: whether the source had begun to answer. */
function timedOut(answered: boolean): string {
  const bound = `${SOURCE_TEST_TIMEOUT_MS / 1_000} s`;
  return answered
    ? `the source's answer did not finish within ${bound}, the most a connection check waits (a run waits longer, and retries)`
    : `the source did not answer within ${bound}, the most a connection check waits (a run waits longer, and retries)`;
}

/**
 * A 2xx answer whose body has no list where the config says: for a run, maybe a proxy's page
 * once (transient); for a check, whose whole point is the config, a config to fix.
 */
function wrongShape(error: unknown, status: number | undefined): boolean {
  return (
    error instanceof SourceResponseError &&
    status !== undefined &&
    status >= 200 &&
    status < 300 &&
    / is not an array$/.test(error.message)
  );
}
