import { randomUUID } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type ChainCommit, commitWrites, type PlannedChains, planWrites } from './chain-commit.js';
import { CHAIN_LIVE, type ChainRef, chainKey, chainName, type StoredChain, toChain } from './chain-item.js';
import { DuplicatePageError, isConditionFailure, StoreError } from './errors.js';
import { type Expected, explainRefusal } from './refusals.js';
import { refusedItem } from './refused-item.js';
import type { SyncRunStore } from './sync-runs.js';
import { type TransactItems, transactWithRetry } from './transact-retry.js';

export type { ChainCommit, ChainEnding, PlannedChains } from './chain-commit.js';

type UpdateParts = Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName' | 'Key'>;

/**
 * The page chains of every run: the run's own and each partition's, addressed by a
 * {@link ChainRef}, each on its own item. Each intent — claim, heartbeat, confirm a send, renew a
 * handoff, hand a page back, defer, commit — is one conditional write of the chain item, refused
 * for a worker that lost the run (fenced, cancelled, ended) or the page (a duplicate, an early
 * page). Only a chain's last commit also writes the run item, in one transaction: it adds the
 * chain's counts to the run's and, for a partition, takes one off the run's open count.
 */
export class ChainStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly runs: SyncRunStore,
  ) {}

  /** The chain, read strongly consistent, or undefined. */
  async get(ref: ChainRef): Promise<StoredChain | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.runs.tableName, Key: chainKey(ref), ConsistentRead: true }),
    );
    return Item ? toChain(Item) : undefined;
  }

  /**
   * The heartbeat a worker sends before it starts work on a page: proof of life from the first
   * millisecond, and the end of the page's handoff (from now on silence means this worker died).
   * Conditioned on the page too, so a duplicate delivery learns it is late before fetching. The
   * same write reads the chain (`ALL_NEW`), so a page step never reads its chain separately; a
   * refusal is explained from the chain as it was (`ALL_OLD`), reading the run only when the
   * chain says the run moved on (fenced, ended, cancelled) or is missing.
   */
  async claim(ref: ChainRef, epoch: number, page: number, now: number): Promise<StoredChain> {
    try {
      const { Attributes } = await this.doc.send(
        new UpdateCommand({
          TableName: this.runs.tableName,
          Key: chainKey(ref),
          UpdateExpression: 'SET heartbeatAt = :now REMOVE handoff',
          ConditionExpression: `${CHAIN_LIVE} AND chainState = :running AND nextPage = :page`,
          ExpressionAttributeValues: { ':epoch': epoch, ':running': 'running', ':page': page, ':now': now },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return toChain(Attributes as Record<string, unknown>);
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const old = refusedItem(error);
      const chain = old ? toChain(old) : undefined;
      // A live chain at the claimer's epoch: the run runs at that epoch (a fence moves every
      // chain, an end marks every chain, in the same transaction), so the page alone is at issue.
      if (chain && chain.epoch === epoch && !chain.ended) {
        // A chain read to its end (done, or an idle window) has no page due: any page is late.
        const position = chain.state === 'running' ? chain : { ...chain, state: 'done' as const };
        const run = { state: 'running' as const, epoch, nextPage: chain.nextPage };
        throw explainRefusal(ref.runId, run, { epoch, page }, error, {
          name: chainName(ref.partition),
          position,
        });
      }
      throw await this.explainRefusal(ref, { epoch, page }, error);
    }
  }

  /** Proof of life from the worker holding a page of the chain at `epoch`. */
  async heartbeat(ref: ChainRef, epoch: number, now: number): Promise<void> {
    await this.update(
      ref,
      { epoch },
      {
        UpdateExpression: 'SET heartbeatAt = :now',
        ConditionExpression: CHAIN_LIVE,
        ExpressionAttributeValues: { ':epoch': epoch, ':now': now },
      },
    );
  }

  /**
   * Confirms that the handed-over page is on the queue. False when the handoff is no longer this
   * one (a worker already took the page, the chain moved on or the run ended): nothing to confirm.
   */
  async confirmSent(ref: ChainRef, epoch: number, page: number, now: number): Promise<boolean> {
    return this.markHandoff(ref, epoch, page, 'sentAt', now);
  }

  /**
   * Notes that the send of the handed-over page failed (its worker saw the error), so the
   * redelivery of the page that handed it over sends it again rather than waiting for the reaper.
   * False when the handoff is no longer this one.
   */
  async noteSendFailed(ref: ChainRef, epoch: number, page: number, now: number): Promise<boolean> {
    return this.markHandoff(ref, epoch, page, 'failedAt', now);
  }

  /**
   * Takes over a handoff to send its page again: conditional on the handoff read (`at`), so of
   * two reapers (or a reaper and a duplicate delivery) noticing the same lost send, one re-sends.
   */
  async renewHandoff(ref: ChainRef, epoch: number, page: number, readAt: number, now: number) {
    return this.tryUpdate(ref, {
      UpdateExpression: 'SET handoff = :handoff',
      ConditionExpression: `${CHAIN_LIVE} AND nextPage = :page AND handoff.#page = :page AND handoff.#at = :readAt`,
      ExpressionAttributeNames: { '#page': 'page', '#at': 'at' },
      ExpressionAttributeValues: {
        ':epoch': epoch,
        ':page': page,
        ':readAt': readAt,
        ':handoff': { page, at: now, sentAt: null },
      },
    });
  }

  /**
   * A step that failed by exception gives its page back to the queue, which redelivers it after
   * its redelivery delay: the chain waits for that delivery (or for the page DLQ and its drain)
   * instead of looking crashed to the reaper. The page is already on the queue: confirmed at once.
   */
  async handBack(ref: ChainRef, epoch: number, page: number, now: number): Promise<boolean> {
    return this.tryUpdate(ref, {
      UpdateExpression: 'SET handoff = :handoff, heartbeatAt = :now',
      ConditionExpression: `${CHAIN_LIVE} AND nextPage = :page`,
      ExpressionAttributeValues: {
        ':epoch': epoch,
        ':page': page,
        ':now': now,
        ':handoff': { page, at: now, sentAt: now },
      },
    });
  }

  /** Records a planned pause of the chain, so the reaper does not mistake it for a crash. */
  async defer(ref: ChainRef, epoch: number, page: number, until: number, now: number): Promise<void> {
    await this.update(
      ref,
      { epoch, page },
      {
        UpdateExpression: 'SET deferredUntil = :until, heartbeatAt = :now, handoff = :handoff',
        ConditionExpression: `${CHAIN_LIVE} AND nextPage = :page`,
        ExpressionAttributeValues: {
          ':epoch': epoch,
          ':page': page,
          ':until': until,
          ':now': now,
          ':handoff': { page, at: now, sentAt: null },
        },
      },
    );
  }

  /**
   * Commits one complete page: checkpoint, next page, heartbeat and counters in one write
   * conditioned on the epoch and the chain's next page, so a duplicate or stale message can never
   * count twice or hand over a successor. The chain's last page (`checkpoint.cursor` null) ends
   * it (see {@link ChainCommit.ending}) in one transaction with the run item.
   */
  async commit(c: ChainCommit): Promise<void> {
    const expected = { epoch: c.epoch, page: c.page };
    const token = randomUUID();
    const writes = commitWrites(this.runs.tableName, c, await this.countsIfEnding(c), token);
    try {
      if (writes.length === 1) {
        const { Key: _key, TableName: _table, ...update } = writes[0]!.Update!;
        await this.update(c.ref, expected, update as UpdateParts);
        return;
      }
      await this.transact(c.ref, expected, writes);
    } catch (error) {
      // DynamoDB may apply a write and lose its answer (a 500, a dropped connection): the SDK's
      // next send then meets the condition the first one moved, or no send is left and the
      // error comes through. This commit's token on the chain (each call writes its own) says
      // it was applied: the caller goes on as after any commit (else the message's redelivery
      // would find its page committed and drop it, and the successor would wait for the reaper).
      if (isAmbiguous(error) && isOwnWrite(await this.readAfter(c.ref, error), c.epoch, token)) return;
      throw error;
    }
  }

  /**
   * Records a run's plan in one transaction: the run's own chain commits its page 1 as the plan
   * (and ends: each partition carries its own chain from now on), the run learns its partitions,
   * and each partition's chain is created, due at page 1. Conditioned like a page commit of page
   * 1, so of two deliveries of the planning message exactly one writes a plan.
   */
  async plan(p: PlannedChains): Promise<void> {
    await this.transact({ runId: p.runId }, { epoch: p.epoch, page: 1 }, planWrites(this.runs.tableName, p));
  }

  /**
   * Starts the tail pass of an idle open window: it reads again from the latest version it read
   * (`from`), at its next page. Conditioned on the chain being idle, so of two deciders (the worker
   * that finished the last other window, the reaper) one arms it. False when another did.
   */
  async armTail(ref: ChainRef, epoch: number, from: string | null, page: number, now: number) {
    let doubt: unknown;
    const token = randomUUID();
    try {
      const armed = await this.tryUpdate(ref, {
        UpdateExpression:
          'SET chainState = :running, tailFrom = :from, handoff = :handoff, heartbeatAt = :now, writeToken = :token',
        ConditionExpression: `${CHAIN_LIVE} AND chainState = :idle`,
        ExpressionAttributeValues: {
          ':epoch': epoch,
          ':running': 'running',
          ':idle': 'idle',
          ':from': from,
          ':now': now,
          ':handoff': { page, at: now, sentAt: null },
          ':token': token,
        },
      });
      if (armed) return true;
    } catch (error) {
      doubt = error;
    }
    // Refused or failed: by another decider's arming, or this one's answer was lost (see commit).
    const own = isOwnWrite(await this.readAfter(ref, doubt), epoch, token);
    if (!own && doubt !== undefined) throw doubt;
    return own;
  }

  /**
   * The chain as it is after a write whose outcome is in doubt; `error` (the write's) is thrown
   * instead when the read fails too, so the caller's failure is the write's.
   */
  private async readAfter(ref: ChainRef, error: unknown): Promise<StoredChain | undefined> {
    try {
      return await this.get(ref);
    } catch (readError) {
      throw error ?? readError;
    }
  }

  /** Names a refused chain write: the run's reasons first (cancelled, fenced, ended), then the chain's page. */
  async explainRefusal(ref: ChainRef, expected: Expected, cause: unknown): Promise<StoreError> {
    const [run, position] = await Promise.all([this.runs.get(ref.runId), this.get(ref)]);
    return explainRefusal(ref.runId, run, expected, cause, { name: chainName(ref.partition), position });
  }

  /** The chain's counts before an ending commit, which adds them to the run's. */
  private async countsIfEnding(c: ChainCommit): Promise<StoredChain | undefined> {
    if (c.checkpoint.cursor !== null) return undefined;
    const chain = await this.get(c.ref);
    // A missing chain or another page: the commit's own condition refuses it, and says why.
    return chain?.nextPage === c.page ? chain : undefined;
  }

  /** Stamps the current handoff of `page` (its send seen to succeed or to fail); false when it is no longer this one. */
  private markHandoff(
    ref: ChainRef,
    epoch: number,
    page: number,
    mark: 'sentAt' | 'failedAt',
    now: number,
  ): Promise<boolean> {
    return this.tryUpdate(ref, {
      UpdateExpression: 'SET handoff.#mark = :now',
      ConditionExpression: `${CHAIN_LIVE} AND nextPage = :page AND handoff.#page = :page`,
      ExpressionAttributeNames: { '#page': 'page', '#mark': mark },
      ExpressionAttributeValues: { ':epoch': epoch, ':page': page, ':now': now },
    });
  }

  /** A conditional write of the chain item; a refusal is named (see {@link explainRefusal}). */
  private async update(ref: ChainRef, expected: Expected, update: UpdateParts): Promise<void> {
    const refusal = await this.write(ref, update);
    if (refusal) throw await this.explainRefusal(ref, expected, refusal.error);
  }

  /** A conditional write of the chain item: false when its condition refused it. */
  private async tryUpdate(ref: ChainRef, update: UpdateParts): Promise<boolean> {
    return (await this.write(ref, update)) === undefined;
  }

  /** Sends a conditional write of the chain item; a refusal by its condition is returned, not thrown. */
  private async write(ref: ChainRef, update: UpdateParts): Promise<{ error: unknown } | undefined> {
    try {
      await this.doc.send(
        new UpdateCommand({ TableName: this.runs.tableName, Key: chainKey(ref), ...update }),
      );
      return undefined;
    } catch (error) {
      if (isConditionFailure(error)) return { error };
      throw error;
    }
  }

  /**
   * Runs a transaction of chain and run writes, sent again after a collision with another
   * transaction (two partitions ending at once); a refused condition is named.
   */
  private async transact(ref: ChainRef, expected: Expected, items: TransactItems): Promise<void> {
    await transactWithRetry(this.doc, {
      items: () => items,
      refused: async (_reasons, error) => {
        throw await this.explainRefusal(ref, expected, error);
      },
    });
  }
}

/** Whether the chain's last move was the write that carried `token`, at `epoch`. */
function isOwnWrite(chain: StoredChain | undefined, epoch: number, token: string): boolean {
  return chain !== undefined && chain.epoch === epoch && chain.writeToken === token;
}

/**
 * Whether a write that failed with `error` may have been applied: a refusal naming the page as
 * already committed (the SDK sent it again after a lost answer), or an error that is none of the
 * store's refusals (a 500, a timeout, a dropped connection).
 */
function isAmbiguous(error: unknown): boolean {
  return error instanceof DuplicatePageError || !(error instanceof StoreError);
}
