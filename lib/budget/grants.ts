/**
 * Grants: a worker that asks the budget while it is plentiful and its concurrency cap far from
 * reached is given a few requests at once, to send one after another over a short while, so the
 * budget record is written once for several requests instead of twice for each (see
 * docs/rate-budgets.md). Pure: `lib/budget/pacing.ts` applies these rules in `take`.
 *
 * A grant can never make the budget spend more than it has: its requests are counted when it is
 * given. What it costs the others is bounded: only while the credential's leases fill at most a
 * quarter of its concurrency cap does a take grant more than one request, the grant's lease lapses
 * {@link GRANT.lifeMs} + {@link GRANT.tailMs} after it was given (sooner when its worker takes again
 * and returns it), and its requests must start before the window they were counted in closes.
 */
export const GRANT = {
  /** The most requests one take grants. */
  tokens: 4,
  /** A grant's requests start within this long after it was given. */
  lifeMs: 10_000,
  /**
   * The grant's lease lasts this much longer than its last start: a request still in flight
   * shortly before the lease lapses renews it (`RateBudgetStore.renew`).
   */
  tailMs: 3_000,
  /** Only a concurrency cap this large is shared by grants (a smaller one serves one request a lease). */
  minCap: 4,
  /** Grants only while live leases, this one included, fill at most 1/`capShare` of the cap. */
  capShare: 4,
  /** Grants only while the window has at least this many requests left... */
  minRemaining: 40,
  /** ...and then at most 1/`remainingShare` of them. */
  remainingShare: 10,
} as const;

/**
 * How many requests a take that asks for `want` may be given: 1 unless the cap and the window
 * leave plenty for everyone else (see {@link GRANT}).
 *
 * @param live - the credential's live leases before this take.
 * @param closesAt - when the current window stops accepting requests (its reset minus the skew
 *   margin); null when no window is known.
 */
export function grantable(
  state: { readonly remaining: number | null },
  live: number,
  now: number,
  policy: { readonly maxConcurrent: number },
  want: number,
  closesAt: number | null,
): number {
  if (want <= 1) return 1;
  const cap = policy.maxConcurrent;
  if (cap > 0 && (cap < GRANT.minCap || (live + 1) * GRANT.capShare > cap)) return 1;
  if (closesAt !== null && closesAt - now <= GRANT.lifeMs) return 1;
  if (state.remaining === null) return Math.min(want, GRANT.tokens);
  if (state.remaining < GRANT.minRemaining) return 1;
  return Math.max(1, Math.min(want, GRANT.tokens, Math.floor(state.remaining / GRANT.remainingShare)));
}

/** The lease of a grant of `tokens` requests given at `now` (a single request's: `policy.leaseMs`). */
export function grantLease(
  tokens: number,
  now: number,
  policy: { readonly leaseMs: number },
): { readonly grantedAt: number; readonly expiresAt: number } {
  return {
    grantedAt: now,
    expiresAt: tokens > 1 ? now + GRANT.lifeMs + GRANT.tailMs : now + policy.leaseMs,
  };
}

/** A grant its worker is done with, handed back with its next write on the record. */
export interface GrantReturn {
  readonly leaseId: string;
  /** Requests of the grant never sent. */
  readonly unused: number;
  /** The reset of the window the grant was counted in (null: none was known). */
  readonly windowResetAt: number | null;
}

/**
 * The budget once a grant is handed back: its lease is released and, while the window it was
 * counted in is still the current one, its unsent requests go back to the window.
 */
export function returnGrant<
  S extends {
    readonly remaining: number | null;
    readonly resetAt: number | null;
    readonly leases: Readonly<Record<string, unknown>>;
  },
>(state: S, back: GrantReturn, limit: number | null): S {
  const { [back.leaseId]: _released, ...leases } = state.leases;
  const sameWindow = state.resetAt !== null && state.resetAt === back.windowResetAt;
  if (back.unused <= 0 || state.remaining === null || !sameWindow) return { ...state, leases };
  const remaining = state.remaining + back.unused;
  return { ...state, leases, remaining: limit === null ? remaining : Math.min(limit, remaining) };
}
