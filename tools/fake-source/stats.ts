/** Which route answered a request; `unknown` for paths the fake does not serve. */
export const ROUTES = [
  'records',
  'records-paged',
  'record',
  'github-issues',
  'github-issue',
  'gitlab-issues',
  'gitlab-issue',
  'truth',
  'control',
  'stats',
  'unknown',
] as const;
/** One of {@link ROUTES}. */
export type RouteName = (typeof ROUTES)[number];

/** What the fake source has served so far (`GET /_stats`). */
export interface Stats {
  /** Every HTTP request, control and truth included. */
  readonly requests: number;
  /** Requests to the listing and item routes: what a harvest costs the source. */
  readonly sourceRequests: number;
  readonly byRoute: Readonly<Record<RouteName, number>>;
  /** Count per HTTP status, keys as strings: `{ "200": 97, "503": 3 }`. */
  readonly byStatus: Readonly<Record<string, number>>;
  /** Per listing request key (path + sorted query), how many times it was answered 2xx. */
  readonly pagesServed: Readonly<Record<string, number>>;
  /** Successful page answers beyond the first for their key: pages a client fetched again. */
  readonly duplicatePageServes: number;
  /** Requests to the item routes (`/records/{id}`, `/repos/…/issues/{number}`), whatever their status. */
  readonly itemFetches: number;
  /** Requests answered with an injected fault (5xx, 429, rate-limit window, forced status). */
  readonly faultsInjected: number;
  /** Requests refused by the shared quota (403/429 with `X-RateLimit-Remaining: 0`). */
  readonly quotaRejected: number;
  /** The most source requests the server was handling at one moment. */
  readonly maxInFlight: number;
}

/** One served request, as the server reports it to {@link StatsRecorder}. */
export interface ServedRequest {
  readonly route: RouteName;
  readonly status: number;
  readonly key: string;
  readonly kind: 'page' | 'item' | 'admin' | 'unknown';
  readonly faulted: boolean;
  /** Refused by the shared quota. */
  readonly refused?: boolean;
}

/** Counts served requests; `snapshot()` copies, so callers can keep and compare snapshots. */
export class StatsRecorder {
  private requests = 0;
  private sourceRequests = 0;
  private byRoute = emptyByRoute();
  private byStatus: Record<string, number> = {};
  private pagesServed = new Map<string, number>();
  private itemFetches = 0;
  private faultsInjected = 0;
  private quotaRejected = 0;
  private inFlight = 0;
  private maxInFlight = 0;

  /** A source request began (it counts as in flight until {@link finished}). */
  started(): void {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
  }

  /** A source request was answered. */
  finished(): void {
    this.inFlight -= 1;
  }

  /** Records one answered request. */
  record(served: ServedRequest): void {
    this.requests += 1;
    if (served.refused) this.quotaRejected += 1;
    this.byRoute[served.route] += 1;
    this.byStatus[served.status] = (this.byStatus[served.status] ?? 0) + 1;
    if (served.faulted) this.faultsInjected += 1;
    if (served.kind === 'page' || served.kind === 'item') this.sourceRequests += 1;
    if (served.kind === 'item') this.itemFetches += 1;
    if (served.kind === 'page' && served.status >= 200 && served.status < 300) {
      this.pagesServed.set(served.key, (this.pagesServed.get(served.key) ?? 0) + 1);
    }
  }

  /** Forgets everything counted so far (fault decisions keep their own history). */
  reset(): void {
    this.requests = 0;
    this.sourceRequests = 0;
    this.byRoute = emptyByRoute();
    this.byStatus = {};
    this.pagesServed.clear();
    this.itemFetches = 0;
    this.faultsInjected = 0;
    this.quotaRejected = 0;
    this.maxInFlight = this.inFlight;
  }

  /** A copy of the counts. */
  snapshot(): Stats {
    let duplicatePageServes = 0;
    for (const count of this.pagesServed.values()) duplicatePageServes += count - 1;
    return {
      requests: this.requests,
      sourceRequests: this.sourceRequests,
      byRoute: { ...this.byRoute },
      byStatus: { ...this.byStatus },
      pagesServed: Object.fromEntries(this.pagesServed),
      duplicatePageServes,
      itemFetches: this.itemFetches,
      faultsInjected: this.faultsInjected,
      quotaRejected: this.quotaRejected,
      maxInFlight: this.maxInFlight,
    };
  }
}

function emptyByRoute(): Record<RouteName, number> {
  return Object.fromEntries(ROUTES.map((route) => [route, 0])) as Record<RouteName, number>;
}
