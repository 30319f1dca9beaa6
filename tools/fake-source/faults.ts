import { intBetween, unit } from './prng.js';
import { applyOverride, type ResolvedFaultProfile } from './profiles.js';

/** What the fault injector decided for one source request. */
export type FaultDecision =
  | { readonly kind: 'none' }
  | { readonly kind: 'transient'; readonly status: TransientStatus }
  | { readonly kind: 'throttled'; readonly retryAfterSeconds: number }
  | { readonly kind: 'rate-limit-window'; readonly resetAtMs: number }
  | { readonly kind: 'forced'; readonly status: number };

/** The 5xx statuses a transient fault answers with. */
export const TRANSIENT_STATUSES = [500, 502, 503] as const;
/** One of {@link TRANSIENT_STATUSES}. */
export type TransientStatus = (typeof TRANSIENT_STATUSES)[number];

/** A decision plus how long to wait before answering. */
export interface FaultVerdict {
  readonly decision: FaultDecision;
  readonly latencyMs: number;
  /** How many times this request key was requested before this one (0 for the first). */
  readonly attempt: number;
}

/** GitHub's primary quota for an authenticated token. */
export const RATE_LIMIT_QUOTA = 5_000;
const QUOTA_PERIOD_MS = 60 * 60 * 1_000;
const NONE: FaultDecision = { kind: 'none' };

interface KeyState {
  requests: number;
  consecutiveFailures: number;
}

/**
 * Decides, per source request, whether it fails and how. Random faults are a pure function of
 * (seed, request key, attempt number) — so retries of a page eventually succeed, and two runs with
 * the same seed meet the same faults whatever their concurrency — plus a guard that lets no key
 * fail more than `maxConsecutiveFailures` times in a row. Only the rate-limit window depends on
 * global order: it models a shared quota.
 */
export class FaultInjector {
  private readonly keys = new Map<string, KeyState>();
  private overrideKeys: string[] = [];
  private requestsOutsideWindows = 0;
  private windowEndsAtMs = 0;
  private quotaStartedAtMs: number | null = null;
  private quotaUsed = 0;

  constructor(
    private readonly seed: number,
    private profile: ResolvedFaultProfile,
    private readonly now: () => number,
  ) {
    this.setProfile(profile);
  }

  /** Switches profile; an open rate-limit window closes, so `set-profile none` heals at once. */
  setProfile(profile: ResolvedFaultProfile): void {
    this.profile = profile;
    this.windowEndsAtMs = 0;
    // Longest first, so the most specific override wins.
    this.overrideKeys = Object.keys(profile.perPathOverrides).sort((a, b) => b.length - a.length);
  }

  /** Decides the fate of one request for `key` (path + sorted query) on `path`. */
  decide(key: string, path: string): FaultVerdict {
    const profile = this.profileFor(key, path);
    const state = this.keys.get(key) ?? { requests: 0, consecutiveFailures: 0 };
    this.keys.set(key, state);
    const attempt = state.requests++;
    this.countQuota();
    const latencyMs = profile.latencyMs + profile.latencyJitterMs * unit(this.seed, 'latency', key, attempt);
    if (profile.forceStatus !== null) {
      return { decision: { kind: 'forced', status: profile.forceStatus }, latencyMs, attempt };
    }
    let decision = this.windowFault() ?? this.randomFault(profile, key, attempt);
    if (decision.kind !== 'none' && state.consecutiveFailures >= profile.maxConsecutiveFailures)
      decision = NONE;
    state.consecutiveFailures = decision.kind === 'none' ? 0 : state.consecutiveFailures + 1;
    return { decision, latencyMs, attempt };
  }

  /** GitHub's rate-limit headers as they stand now; sent on every response. */
  rateLimitHeaders(): Record<string, string> {
    const now = this.now();
    if (now < this.windowEndsAtMs) return quotaHeaders(RATE_LIMIT_QUOTA, this.windowEndsAtMs);
    this.rollQuota(now);
    return quotaHeaders(this.quotaUsed, (this.quotaStartedAtMs ?? now) + QUOTA_PERIOD_MS);
  }

  private profileFor(key: string, path: string): ResolvedFaultProfile {
    const match = this.overrideKeys.find((k) =>
      k.endsWith('*') ? key.startsWith(k.slice(0, -1)) : k === key || k === path,
    );
    const override = match === undefined ? undefined : this.profile.perPathOverrides[match];
    return override ? applyOverride(this.profile, override) : this.profile;
  }

  private randomFault(profile: ResolvedFaultProfile, key: string, attempt: number): FaultDecision {
    const roll = unit(this.seed, 'fault', key, attempt);
    if (roll < profile.transientRate) {
      const index = intBetween(0, TRANSIENT_STATUSES.length - 1, this.seed, 'status', key, attempt);
      return { kind: 'transient', status: TRANSIENT_STATUSES[index]! };
    }
    if (roll < profile.transientRate + profile.rate429) {
      const [min, max] = profile.retryAfterSeconds;
      return { kind: 'throttled', retryAfterSeconds: intBetween(min, max, this.seed, 'retry', key, attempt) };
    }
    return NONE;
  }

  private windowFault(): FaultDecision | null {
    const now = this.now();
    if (now < this.windowEndsAtMs) return { kind: 'rate-limit-window', resetAtMs: this.windowEndsAtMs };
    const every = this.profile.githubRateLimitEvery;
    if (every <= 0) return null;
    this.requestsOutsideWindows += 1;
    if (this.requestsOutsideWindows % every !== 0) return null;
    this.windowEndsAtMs = now + this.profile.rateLimitWindowSeconds * 1_000;
    return { kind: 'rate-limit-window', resetAtMs: this.windowEndsAtMs };
  }

  // The quota never runs out by itself: exhaustion is what the window simulates. A fresh period
  // starts just before the last call, so a client that throttles on `Remaining: 0` never stalls for an hour.
  private countQuota(): void {
    this.rollQuota(this.now());
    this.quotaUsed += 1;
  }

  private rollQuota(now: number): void {
    const expired = this.quotaStartedAtMs === null || now >= this.quotaStartedAtMs + QUOTA_PERIOD_MS;
    if (expired || this.quotaUsed >= RATE_LIMIT_QUOTA - 1) {
      this.quotaStartedAtMs = now;
      this.quotaUsed = 0;
    }
  }
}

function quotaHeaders(used: number, resetAtMs: number): Record<string, string> {
  return {
    'x-ratelimit-limit': String(RATE_LIMIT_QUOTA),
    'x-ratelimit-remaining': String(RATE_LIMIT_QUOTA - used),
    'x-ratelimit-reset': String(Math.ceil(resetAtMs / 1_000)),
    'x-ratelimit-used': String(used),
    'x-ratelimit-resource': 'core',
  };
}
