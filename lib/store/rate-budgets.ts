import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { GRANT, type GrantReturn, returnGrant } from '../budget/grants.js';
import {
  type BudgetPolicy,
  type BudgetState,
  EMPTY_BUDGET,
  type Lease,
  type Observation,
  observe,
  type Slot,
  type TakeResult,
  take,
} from '../budget/pacing.js';
import { isConditionFailure, StoreError } from './errors.js';

/** What a budget record says about its credential besides the state (for an operator reading the table). */
export interface BudgetLabel {
  readonly connector: string;
  readonly origin: string;
}

/** A credential's budget was contended past the retry bound (many workers writing it at once). */
export class BudgetContendedError extends StoreError {
  override readonly name = 'BudgetContendedError';
}

interface Versioned {
  readonly state: BudgetState;
  /** 0: the record does not exist yet. */
  readonly version: number;
}

/** A grant this worker holds on a credential (lib/budget/grants.ts). */
interface HeldGrant {
  readonly leaseId: string;
  /** Requests of the grant not sent yet. */
  left: number;
  /** The grant's requests start before this. */
  readonly startBy: number;
  readonly windowResetAt: number | null;
  /** One of its requests is in flight (a grant sends one at a time). */
  inFlight: boolean;
  /** Its lease was renewed for a long request: the grant ends with that request's settle, written. */
  renewed: boolean;
}

/** Conditional writes lost to another worker before giving up (each loss re-reads the record). */
const MAX_WRITE_ATTEMPTS = 25;

/** An idle credential's record is deleted by TTL after this long (it is rebuilt from the next response). */
const IDLE_TTL_SECONDS = 7 * 24 * 60 * 60;

function toState(item: Record<string, unknown>): BudgetState {
  const num = (value: unknown): number | null => (typeof value === 'number' ? value : null);
  return {
    limit: num(item.limit),
    windowMs: num(item.windowMs),
    windowConfirmed: item.windowConfirmed === true,
    remaining: num(item.remaining),
    resetAt: num(item.resetAt),
    resetFromSource: item.resetFromSource === true,
    sourceResetAt: num(item.sourceResetAt),
    ahead: num(item.ahead) ?? 0,
    pausedUntil: num(item.pausedUntil) ?? 0,
    leases: (item.leases as Record<string, Lease> | undefined) ?? {},
  };
}

function sameState(a: BudgetState, b: BudgetState): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The rate budget records, one per credential (see `lib/budget/pacing.ts` for the arithmetic).
 * Each take and each settle is one conditional write on the record's version: a read-modify-write
 * that loses to another worker re-reads and tries again, so two workers never both spend the last
 * request of a window. The last version seen is kept in memory, so a worker that is the only
 * writer pays one write per take, no read.
 */
export class RateBudgetStore {
  private readonly seen = new Map<string, Versioned>();
  private readonly grants = new Map<string, HeldGrant>();
  /** Grants this worker is done with, handed back by its next write on the record. */
  private readonly returns = new Map<string, GrantReturn[]>();

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  /**
   * One request asks the credential's budget (see {@link take}). A grant this worker holds serves
   * it without a write; otherwise the take asks for a grant of several requests, which the budget
   * gives only while it is plentiful (lib/budget/grants.ts), and hands back a grant this worker is
   * done with in the same write.
   */
  async take(
    key: string,
    label: BudgetLabel,
    now: number,
    policy: BudgetPolicy,
    leaseId: string,
    reservation?: Slot,
  ): Promise<TakeResult> {
    const held = this.grants.get(key);
    const cached = this.seen.get(key);
    const lease = held && cached?.state.leases[held.leaseId];
    if (
      held &&
      cached &&
      lease &&
      !reservation &&
      !held.inFlight &&
      !held.renewed &&
      held.left > 0 &&
      now < held.startBy
    ) {
      held.left -= 1;
      held.inFlight = true;
      return { kind: 'go', state: cached.state, leaseId: held.leaseId, tokens: 1, lease };
    }
    if (held && !held.inFlight) this.endGrant(key, held);
    const want = this.grants.has(key) ? 1 : GRANT.tokens;
    const result = await this.update(key, label, now, policy, (state) => {
      const result = take(state, now, policy, leaseId, reservation, want);
      return { next: result.state, result };
    });
    if (result.kind === 'go' && result.tokens > 1) {
      this.grants.set(key, {
        leaseId,
        left: result.tokens - 1,
        startBy: now + GRANT.lifeMs,
        windowResetAt: result.state.resetAt,
        inFlight: true,
        renewed: false,
      });
    }
    return result;
  }

  /**
   * A request ended: its lease is released and what its response said is learned (see
   * {@link observe}). A request of a grant whose response brings no news (nothing {@link observe}
   * would change, no refusal) writes nothing: the grant's next request goes on, and the grant is
   * handed back by the worker's next take. News ends the grant in this write, so every worker
   * learns it at once.
   */
  async settle(
    key: string,
    label: BudgetLabel,
    now: number,
    policy: BudgetPolicy,
    leaseId: string | null,
    seen: Observation,
    refused = false,
  ): Promise<BudgetState> {
    const held = this.grants.get(key);
    if (held && held.leaseId === leaseId) {
      held.inFlight = false;
      const cached = this.seen.get(key);
      if (!refused && !held.renewed && cached && quiet(cached.state, now, policy, seen)) {
        if (held.left === 0 || now >= held.startBy) this.endGrant(key, held);
        return cached.state;
      }
      this.endGrant(key, held);
    }
    return this.update(key, label, now, policy, (state) => {
      const next = observe(state, now, policy, leaseId, seen);
      return { next, result: next };
    });
  }

  /**
   * Keeps the lease of a grant's request still in flight shortly before the lease lapses: the
   * request holds its concurrency slot as long as a single request's lease would.
   */
  async renew(
    key: string,
    label: BudgetLabel,
    now: number,
    policy: BudgetPolicy,
    leaseId: string,
  ): Promise<void> {
    const held = this.grants.get(key);
    if (held?.leaseId === leaseId) held.renewed = true;
    await this.update(key, label, now, policy, (state) => {
      const next = {
        ...state,
        leases: { ...state.leases, [leaseId]: { grantedAt: now, expiresAt: now + policy.leaseMs } },
      };
      return { next, result: next };
    });
  }

  /** Stops using a grant; its lease and unsent requests go back with the next write. */
  private endGrant(key: string, held: HeldGrant): void {
    this.grants.delete(key);
    const back = { leaseId: held.leaseId, unused: held.left, windowResetAt: held.windowResetAt };
    this.returns.set(key, [...(this.returns.get(key) ?? []), back]);
  }

  /** The record as stored (tests and operators); null when there is none. */
  async read(key: string): Promise<BudgetState | null> {
    const current = await this.load(key);
    return current.version === 0 ? null : current.state;
  }

  private async update<T>(
    key: string,
    label: BudgetLabel,
    now: number,
    policy: BudgetPolicy,
    change: (state: BudgetState) => { next: BudgetState; result: T },
  ): Promise<T> {
    const cached = this.seen.get(key);
    let current = cached ?? (await this.load(key));
    let fresh = cached === undefined;
    // Grants this worker is done with ride on this write (if it is never made, their leases lapse).
    const back = this.returns.get(key) ?? [];
    this.returns.delete(key);
    const handBack = (state: BudgetState) =>
      back.reduce((s, b) => returnGrant(s, b, s.limit ?? policy.configured?.limit ?? null), state);
    for (let attempt = 1; ; attempt++) {
      const { next, result } = change(handBack(current.state));
      if (sameState(next, current.state) && current.version > 0) {
        if (fresh) return result;
        // Nothing to write, judged on what this worker saw last: another worker may have changed
        // the record since (released a lease, learned a reset), so judge again on the stored one.
        current = await this.load(key);
        fresh = true;
        continue;
      }
      try {
        await this.write(key, label, now, next, current.version);
        this.seen.set(key, { state: next, version: current.version + 1 });
        return result;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        if (attempt >= MAX_WRITE_ATTEMPTS) {
          throw new BudgetContendedError(
            'rate budget record too contended',
            { key, attempt },
            { cause: error },
          );
        }
      }
      // Another worker wrote first: start again from what it wrote, after a moment's jitter.
      await this.sleep(Math.floor(Math.random() * 5 * attempt));
      current = await this.load(key);
      fresh = true;
    }
  }

  private async load(key: string): Promise<Versioned> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { credentialId: key }, ConsistentRead: true }),
    );
    const loaded = Item
      ? { state: toState(Item), version: Number(Item.version) }
      : { state: EMPTY_BUDGET, version: 0 };
    this.seen.set(key, loaded);
    return loaded;
  }

  private async write(
    key: string,
    label: BudgetLabel,
    now: number,
    state: BudgetState,
    version: number,
  ): Promise<void> {
    await this.doc.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          credentialId: key,
          connector: label.connector,
          origin: label.origin,
          ...state,
          version: version + 1,
          updatedAt: now,
          expiresAt: Math.floor(now / 1_000) + IDLE_TTL_SECONDS,
        },
        // The version this state was computed from is still the stored one (or there is none yet).
        ConditionExpression: version === 0 ? 'attribute_not_exists(credentialId)' : 'version = :v',
        ...(version === 0 ? {} : { ExpressionAttributeValues: { ':v': version } }),
      }),
    );
  }
}

/**
 * Whether a response of a grant's request brings no news: the budget as this worker last wrote it
 * would learn nothing from it (the same window, no less left than counted, no pause).
 */
function quiet(state: BudgetState, now: number, policy: BudgetPolicy, seen: Observation): boolean {
  const learned = observe(state, now, policy, null, seen);
  return sameState({ ...learned, leases: {} }, { ...state, leases: {} });
}
