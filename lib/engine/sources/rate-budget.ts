import { randomUUID } from 'node:crypto';
import { credentialKey } from '../../budget/credential.js';
import { readBudget } from '../../budget/headers.js';
import type { BudgetPolicy, Observation, Slot, TakeResult } from '../../budget/pacing.js';
import { RELIABILITY } from '../../config/constants.js';
import type { Connector, CredentialScope } from '../../connectors/contract.js';
import type { HarvesterLogger } from '../../observability/logger.js';
import { METRIC } from '../../observability/metrics.js';
import { ClassifiedError } from '../../retry/errors.js';
import type { BudgetLabel, RateBudgetStore } from '../../store/rate-budgets.js';
import type { EngineDeps } from '../deps.js';
import type { StepContext } from '../step/context.js';

/**
 * Every source request of a step spends its credential's rate budget (lib/budget/pacing.ts): the
 * connector's `fetch` is wrapped here, so connectors only declare their credential. Before the
 * request: one conditional write takes a request (or a reserved slot, or a concurrency lease);
 * after it: one conditional write releases the lease and learns what the response said. While
 * the budget is plentiful a take grants a few requests at once and a quiet response writes
 * nothing (lib/budget/grants.ts, docs/rate-budgets.md).
 *
 * Budget time is the retry loop's clock (`deps.retry.now`): like a `Retry-After`, a budget is the
 * source's time, which tests and the chaos suite keep apart from the engine clock they move to
 * let the reaper see silence.
 */

/**
 * The budget cannot serve this request before `until`, further off than a worker may sleep: the
 * page is deferred to then (with its reserved slot, so it keeps its place in line). Spent no
 * attempt: no request was sent.
 */
export class RateBudgetWaitError extends Error {
  override readonly name = 'RateBudgetWaitError';
  constructor(
    readonly until: number,
    readonly slot: Slot | null,
  ) {
    super(`the credential's rate budget is spent until ${new Date(until).toISOString()}`);
  }
}

/**
 * The most requests a credential may have in flight at once (the stack's
 * `MAX_CONCURRENT_REQUESTS_PER_CREDENTIAL`); `Infinity` when uncapped. More partitions of one run
 * than this would only queue on the cap.
 */
export function concurrentRequestsPerCredential(deps: Pick<EngineDeps, 'limits'>): number {
  const cap = deps.limits.maxConcurrentRequestsPerCredential ?? 0;
  return cap > 0 ? cap : Number.POSITIVE_INFINITY;
}

/** What one step remembers about its budget: the slot its message brought, the slot a wait reserved. */
export interface StepBudget {
  /** A reservation the page was deferred with; the step's first request uses it. */
  arrived: Slot | undefined;
  /** The reservation of the wait that defers this step; the deferral carries it on the message. */
  pending: Slot | undefined;
}

const steps = new WeakMap<StepContext, StepBudget>();

function stepBudget(context: StepContext): StepBudget {
  let budget = steps.get(context);
  if (!budget) {
    budget = { arrived: context.message.budgetSlot, pending: undefined };
    steps.set(context, budget);
  }
  return budget;
}

/** The slot a budget wait of this step reserved, for the message that defers it; undefined otherwise. */
export function reservedSlot(context: StepContext): Slot | undefined {
  return steps.get(context)?.pending;
}

function policyOf(deps: EngineDeps, scope: CredentialScope): BudgetPolicy {
  return {
    maxConcurrent: deps.limits.maxConcurrentRequestsPerCredential ?? 0,
    leaseMs: RELIABILITY.budgetLeaseMs,
    configured: scope.configured && {
      limit: scope.configured.limit,
      windowMs: scope.configured.windowSeconds * 1_000,
    },
  };
}

function headerRecord(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    record[name.toLowerCase()] = value;
  });
  return record;
}

/**
 * The retry loop's sleep (shortened in tests), cut short when a heartbeat learns the run is no
 * longer ours: a stopped worker never sleeps out a backoff or a budget wait, and its next take or
 * attempt stops the step.
 */
export function ownedSleep(context: StepContext): (ms: number) => Promise<void> {
  const { deps, heartbeat } = context;
  return (ms) =>
    new Promise<void>((resolve) => {
      if (heartbeat.signal.aborted) {
        resolve();
        return;
      }
      const done = () => {
        heartbeat.signal.removeEventListener('abort', done);
        resolve();
      };
      heartbeat.signal.addEventListener('abort', done, { once: true });
      deps.retry.sleep(ms).then(done, done);
    });
}

/** A short real-time pause while every concurrency lease is taken (in-flight requests last milliseconds to seconds). */
const BUSY_POLL_MS = { min: 25, max: 250 } as const;

/**
 * Whoever spends a credential's budget: a page step, or the API's connection check of a source.
 */
export interface BudgetSpender {
  readonly deps: EngineDeps;
  readonly log: HarvesterLogger;
  /** Throws when the spender must stop waiting (a fenced step, a check out of time). */
  ensureOwned(): void;
  sleep(ms: number): Promise<void>;
  /** The slot the spender arrived with, and the one a wait too long to sleep reserved. */
  readonly budget: StepBudget;
  /** Longest budget wait slept; a longer one throws {@link RateBudgetWaitError}. */
  readonly maxInlineWaitMs: number;
}

/**
 * The step's `fetch`, spending the credential's budget; the plain `fetch` when the connector
 * declares no credential or no budget store is wired.
 */
export function budgetedFetch(context: StepContext): typeof fetch {
  return spendingFetch(context.connector, context.config, {
    deps: context.deps,
    log: context.log,
    ensureOwned: () => context.ensureOwned(),
    sleep: ownedSleep(context),
    budget: stepBudget(context),
    maxInlineWaitMs: context.deps.limits.maxInlineBudgetWaitMs ?? RELIABILITY.maxInlineBudgetWaitMs,
  });
}

/**
 * `deps.fetch` spending the budget of the credential `connector` declares for `config`: a take
 * before each request, a settle after it; the plain `fetch` when the connector declares no
 * credential or no budget store is wired.
 */
export function spendingFetch(
  connector: Connector<unknown>,
  config: unknown,
  context: BudgetSpender,
): typeof fetch {
  const { deps } = context;
  const scope = connector.credential?.(config) ?? null;
  const store = deps.budgets;
  if (!scope || !store) return deps.fetch;
  const label: BudgetLabel = { connector: connector.manifest.name, origin: scope.origin };
  const credential: CredentialBudget = {
    context,
    store,
    key: credentialKey({ connector: connector.manifest.name, ...scope }),
    label,
    policy: policyOf(deps, scope),
  };

  return async (input, init) => {
    const { leaseId, lease } = await acquire(credential);
    const renewal = renewBeforeLapse(credential, leaseId, lease.expiresAt);
    let response: Response;
    try {
      response = await deps.fetch(input, init);
    } catch (error) {
      await renewal.stop();
      await settle(credential, leaseId, {}, false);
      throw error;
    }
    await renewal.stop();
    const reading = readBudget(response.status, headerRecord(response.headers), deps.retry.now());
    if (reading.rejected) {
      deps.metrics.count(METRIC.budgetRejected);
      context.log.warn('source refused a request for want of rate budget', {
        origin: label.origin,
        status: response.status,
      });
    }
    await settle(credential, leaseId, reading.observation, reading.rejected);
    return response;
  };
}

/** One credential's budget record, as the requests of one fetch spend it. */
interface CredentialBudget {
  readonly context: BudgetSpender;
  readonly store: RateBudgetStore;
  /** The record's key (connector, origin, secret reference). */
  readonly key: string;
  /** What metrics and logs name it by: never the secret. */
  readonly label: BudgetLabel;
  readonly policy: BudgetPolicy;
}

/** How long before a grant's lease lapses a request still in flight renews it. */
const RENEW_MARGIN_MS = 1_000;

/**
 * A grant's lease is short (lib/budget/grants.ts): a request of it still in flight shortly before
 * the lease lapses renews it, so the request keeps its concurrency slot. A single request's lease
 * outlasts the request timeout and needs no renewal.
 */
function renewBeforeLapse(
  { context, store, key, label, policy }: CredentialBudget,
  leaseId: string,
  expiresAt: number,
): { stop(): Promise<void> } {
  const { deps } = context;
  const inMs = expiresAt - RENEW_MARGIN_MS - deps.retry.now();
  if (expiresAt - deps.retry.now() >= RELIABILITY.requestTimeoutMs + RENEW_MARGIN_MS)
    return { stop: async () => {} };
  let renewing: Promise<void> | undefined;
  const timer = setTimeout(
    () => {
      renewing = store.renew(key, label, deps.retry.now(), policy, leaseId).catch((error: unknown) => {
        context.log.warn('could not renew a rate budget lease; the request may outlive it', {
          origin: label.origin,
          error: error instanceof Error ? error.message : String(error),
        });
      });
    },
    Math.max(0, inMs),
  );
  return {
    async stop() {
      clearTimeout(timer);
      // A renewal under way lands before the settle, which must see it.
      await renewing;
    },
  };
}

/** Takes a request from the budget, waiting (or deferring) as it says; returns the lease to release. */
async function acquire(credential: CredentialBudget): Promise<Extract<TakeResult, { kind: 'go' }>> {
  const { context, label } = credential;
  const { deps, budget, sleep } = context;
  const leaseId = randomUUID();
  let reservation = budget.arrived;
  budget.arrived = undefined;
  let waited = false;
  // After sleeping until a time, the budget is asked as of that time at least: the sleep is
  // trusted to have served the wait, as the retry loop trusts its sleeps (shortened in tests).
  let sleptUntil = 0;
  for (;;) {
    context.ensureOwned();
    const now = Math.max(deps.retry.now(), sleptUntil);
    const result = await take(credential, now, leaseId, reservation);
    if (result.kind === 'go') return result;
    if (result.kind === 'busy') {
      const pause = Math.min(BUSY_POLL_MS.max, Math.max(BUSY_POLL_MS.min, result.retryAt - now));
      await new Promise((resolve) => setTimeout(resolve, pause * (0.5 + Math.random() / 2)));
      continue;
    }
    if (result.kind === 'reserved') reservation = result.slot;
    const until = result.kind === 'reserved' ? result.slot.at : result.until;
    const waitMs = until - now;
    if (!waited) {
      waited = true;
      deps.metrics.count(METRIC.budgetWaits);
      deps.metrics.seconds(METRIC.budgetWaitSeconds, Math.max(0, waitMs) / 1_000);
    }
    if (waitMs > context.maxInlineWaitMs) {
      budget.pending = result.kind === 'reserved' ? result.slot : undefined;
      throw new RateBudgetWaitError(until, budget.pending ?? null);
    }
    context.log.debug('waiting for the rate budget', { waitMs, origin: label.origin });
    if (waitMs > 0) await sleep(waitMs);
    sleptUntil = until;
  }
}

async function take(
  { store, key, label, policy }: CredentialBudget,
  now: number,
  leaseId: string,
  reservation: Slot | undefined,
) {
  try {
    return await store.take(key, label, now, policy, leaseId, reservation);
  } catch (cause) {
    // The budget record is unreachable (a throttled or failing table): retry like a source hiccup.
    throw new ClassifiedError('transient', 'rate budget unavailable', { cause });
  }
}

/** Releases the lease and learns the response; a failure here costs only a lease that expires on its own. */
async function settle(
  { context, store, key, label, policy }: CredentialBudget,
  leaseId: string,
  observation: Observation,
  refused: boolean,
): Promise<void> {
  try {
    await store.settle(key, label, context.deps.retry.now(), policy, leaseId, observation, refused);
  } catch (error) {
    context.log.warn('could not settle the rate budget; the lease will expire', {
      origin: label.origin,
      error: error instanceof Error ? error.message : String(error),
    });
  }
}
