import { z } from 'zod';
import { FakeSourceError } from './errors.js';

/**
 * Per-path fault settings: the rate and shape fields of a profile, without the entity-level
 * breakage (which belongs to entities, not paths) and without nesting.
 */
export interface FaultOverride {
  /** Fraction in [0, 1] of requests answered 500, 502 or 503. Default 0. */
  readonly transientRate?: number;
  /** Fraction in [0, 1] of requests answered 429 with `Retry-After`. Default 0. */
  readonly rate429?: number;
  /** `Retry-After` of a 429, in whole seconds: a number, or [min, max] picked per request. Default 1. */
  readonly retryAfterSeconds?: number | readonly [number, number];
  /** Base delay of every source response, in ms. Default 0. */
  readonly latencyMs?: number;
  /** Extra delay in [0, jitter] ms, deterministic per request. Default 0. */
  readonly latencyJitterMs?: number;
  /** Every request answers this status (401, 403, 500…): a permanent fault, exempt from the guard. */
  readonly forceStatus?: number;
  /**
   * No request key fails more often than this in a row (the next request succeeds), so a client
   * with 5 attempts never dead-letters a page by bad luck. Default 3. `forceStatus` ignores it.
   */
  readonly maxConsecutiveFailures?: number;
}

/**
 * How the fake source misbehaves; every field is optional and defaults to "behaves". Faults are
 * deterministic given the seed: a request fails or not by (seed, path + sorted query, how many
 * times that key was requested before), not by global request order.
 */
export interface FaultProfile extends FaultOverride {
  /**
   * Every Nth source request opens a rate-limit window of `rateLimitWindowSeconds`: GitHub routes
   * answer 403 `{"message":"API rate limit exceeded"}` with `X-RateLimit-Remaining: 0` and the
   * window's end as `X-RateLimit-Reset`; other routes answer 429 with `Retry-After`. 0 (default): never.
   * The only fault that depends on global request order, as a quota does.
   */
  readonly githubRateLimitEvery?: number;
  /** Length of a rate-limit window. Default 5. */
  readonly rateLimitWindowSeconds?: number;
  /** This many entities, chosen by the seed, are served broken in listings and item fetches. Default 0. */
  readonly invalidRecords?: number;
  /** This many other entities appear in listings but answer 404 when fetched by id. Default 0. */
  readonly itemNotFound?: number;
  /**
   * Overrides by request: a key is matched against the path (`/records/e-000003`), the whole request
   * key (`/records-paged?limit=10&page=3`), or, ending in `*`, as a prefix of the key (`/records/*`).
   * The longest matching key wins.
   */
  readonly perPathOverrides?: Readonly<Record<string, FaultOverride>>;
}

/** A profile with every default applied. */
export type ResolvedFaultProfile = Required<Omit<FaultProfile, 'forceStatus' | 'retryAfterSeconds'>> & {
  readonly forceStatus: number | null;
  readonly retryAfterSeconds: readonly [number, number];
};

const rate = z.number().min(0).max(1);
const count = z.number().int().min(0);
const seconds = z.number().int().min(0);

const overrideShape = {
  transientRate: rate.optional(),
  rate429: rate.optional(),
  retryAfterSeconds: z.union([seconds, z.tuple([seconds, seconds])]).optional(),
  latencyMs: z.number().min(0).optional(),
  latencyJitterMs: z.number().min(0).optional(),
  forceStatus: z.number().int().min(100).max(599).optional(),
  maxConsecutiveFailures: z.number().int().min(0).optional(),
};

/** Validates a fault override (the body of `set-profile` overrides). */
export const faultOverrideSchema = z.strictObject(overrideShape);

/** Validates a fault profile given as JSON (`POST /_control` `set-profile`). */
export const faultProfileSchema = z
  .strictObject({
    ...overrideShape,
    githubRateLimitEvery: count.optional(),
    rateLimitWindowSeconds: z.number().min(0).optional(),
    invalidRecords: count.optional(),
    itemNotFound: count.optional(),
    perPathOverrides: z.record(z.string(), faultOverrideSchema).optional(),
  })
  .refine((p) => (p.transientRate ?? 0) + (p.rate429 ?? 0) <= 1, 'transientRate + rate429 must not exceed 1');

/**
 * The named profiles (`harvester fake-source --profile realistic`).
 *
 * - `none`: a perfect source.
 * - `realistic` (the demo): ~3 % transient 5xx, ~2 % 429 with Retry-After 1–3 s, a 5 s rate-limit
 *   window every 400 requests, 15 broken records, 20–30 ms latency.
 * - `flaky`: 5 % transient faults (429s with Retry-After up to 10 s among them), 10 broken records.
 * - `storm`: 30 % of requests throttled with Retry-After 1–2 s.
 * - `unauthorized`: every request answers 401, as with a revoked token.
 */
export const FAULT_PROFILES = {
  none: {},
  realistic: {
    transientRate: 0.03,
    rate429: 0.02,
    retryAfterSeconds: [1, 3],
    githubRateLimitEvery: 400,
    rateLimitWindowSeconds: 5,
    invalidRecords: 15,
    latencyMs: 20,
    latencyJitterMs: 10,
  },
  flaky: { transientRate: 0.035, rate429: 0.015, retryAfterSeconds: [1, 10], invalidRecords: 10 },
  storm: { rate429: 0.3, retryAfterSeconds: [1, 2] },
  unauthorized: { forceStatus: 401 },
} as const satisfies Record<string, FaultProfile>;

/** The name of a built-in profile. */
export type FaultProfileName = keyof typeof FAULT_PROFILES;

/** True when `name` names a built-in profile. */
export function isProfileName(name: string): name is FaultProfileName {
  return Object.hasOwn(FAULT_PROFILES, name);
}

/** The default of every profile field: a source that behaves. */
export const PROFILE_DEFAULTS: ResolvedFaultProfile = {
  transientRate: 0,
  rate429: 0,
  retryAfterSeconds: [1, 1],
  latencyMs: 0,
  latencyJitterMs: 0,
  forceStatus: null,
  maxConsecutiveFailures: 3,
  githubRateLimitEvery: 0,
  rateLimitWindowSeconds: 5,
  invalidRecords: 0,
  itemNotFound: 0,
  perPathOverrides: {},
};

/** Fills in the defaults of a profile, or looks up a named one; throws on an unknown name or invalid values. */
export function resolveProfile(profile: FaultProfile | FaultProfileName): ResolvedFaultProfile {
  if (typeof profile === 'string' && !isProfileName(profile)) {
    const names = Object.keys(FAULT_PROFILES).join(', ');
    throw new FakeSourceError(`unknown fault profile "${profile}": one of ${names}`);
  }
  const parsed = faultProfileSchema.safeParse(
    typeof profile === 'string' ? FAULT_PROFILES[profile] : profile,
  );
  if (!parsed.success) throw new FakeSourceError(`invalid fault profile: ${z.prettifyError(parsed.error)}`);
  const {
    perPathOverrides,
    githubRateLimitEvery,
    rateLimitWindowSeconds,
    invalidRecords,
    itemNotFound,
    ...rates
  } = parsed.data;
  const profileLevel = {
    perPathOverrides,
    githubRateLimitEvery,
    rateLimitWindowSeconds,
    invalidRecords,
    itemNotFound,
  };
  return applyOverride({ ...PROFILE_DEFAULTS, ...withoutUndefined(profileLevel) }, rates);
}

/** The profile as it applies to one request after a per-path override. */
export function applyOverride(base: ResolvedFaultProfile, override: FaultOverride): ResolvedFaultProfile {
  const merged = { ...base, ...withoutUndefined(override) };
  const retry = override.retryAfterSeconds ?? base.retryAfterSeconds;
  return {
    ...merged,
    forceStatus: override.forceStatus ?? base.forceStatus,
    retryAfterSeconds: typeof retry === 'number' ? [retry, retry] : [retry[0], retry[1]],
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
