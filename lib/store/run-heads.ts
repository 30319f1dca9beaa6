import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { SyncRun } from '../run/model.js';
import type { StoredChain } from './chain-item.js';
import { chainRefsOfItem, readChains } from './chain-reads.js';
import { toSyncRun } from './run-item.js';

/** A run item as a page step reads it before its claim, and the model made of it alone. */
export interface RunHead {
  readonly run: SyncRun;
  readonly item: Record<string, unknown>;
}

/**
 * The run items a page step reads before it claims its page, and the ones this worker container
 * read for its recent steps, kept so the next page of the same run needs no read of the run item
 * (see docs/control-plane.md).
 *
 * Only the item of a running, unpartitioned run is kept, and only for the epoch it was read at.
 * Within an epoch such an item changes in three ways, and none of them can go unnoticed:
 *
 * - a fence moves the run to a new epoch and its own chain with it, in one transaction: a page of
 *   the new epoch does not find the kept item (another epoch), a page of the old one is refused by
 *   its chain's claim;
 * - an end (success, failure, cancel) marks every chain of the run in the transaction that ends
 *   it: the claim is refused;
 * - the run's first item dead letter sets a flag on the run item and on the chain of the page that
 *   files it, the run's only chain: the next claim returns it (`StoredChain.itemDeadLetters`).
 *
 * A page step that used a kept item and whose claim is refused forgets it and starts again from a
 * fresh read, so a refusal is explained exactly as without the kept item.
 */
export class RunHeads {
  private readonly kept = new Map<
    string,
    { readonly epoch: number; readonly item: Record<string, unknown> }
  >();

  /** @param capacity - the most runs kept; the oldest is dropped first. */
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly capacity = 64,
  ) {}

  /**
   * The run item alone, read strongly consistent, as the model without its chains (`nextPage`,
   * `checkpoint`, `handoff` and the open chains' counts are not in it): what a page step knows
   * before its claim reads its chain. Undefined when there is no such run.
   */
  async read(runId: string): Promise<RunHead | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { runId }, ConsistentRead: true }),
    );
    this.kept.delete(runId);
    if (!Item) return undefined;
    if (mayKeep(Item)) {
      this.kept.set(runId, { epoch: Item.epoch as number, item: Item });
      if (this.kept.size > this.capacity) this.kept.delete(this.kept.keys().next().value as string);
    }
    return { run: toSyncRun(Item), item: Item };
  }

  /**
   * The run item {@link read} last read at `epoch` in this container, without a read, when it may
   * stand in for one: the caller's claim of the run's chain must confirm it, and a refused claim
   * must {@link forget} it and read again.
   */
  recall(runId: string, epoch: number): RunHead | undefined {
    const kept = this.kept.get(runId);
    return kept?.epoch === epoch ? { run: toSyncRun(kept.item), item: kept.item } : undefined;
  }

  /** Forgets the kept item of a run. */
  forget(runId: string): void {
    this.kept.delete(runId);
  }

  /**
   * The run from its item and one of its chains just read by a write (a page step's claim): only
   * the run's other chains, if it has any, are read.
   */
  async withChain(item: Record<string, unknown>, chain: StoredChain): Promise<SyncRun> {
    const others = chainRefsOfItem(item).filter((ref) => ref.partition !== chain.partition);
    if (others.length === 0) return toSyncRun(item, [chain]);
    const read = (await readChains(this.doc, this.tableName, others)).get(item.runId as string) ?? [];
    return toSyncRun(item, [chain, ...read]);
  }
}

/**
 * A running run whose chains live on their own items and that has no partitions: its own chain
 * is its only one, so that chain's claim speaks for the whole run.
 */
function mayKeep(item: Record<string, unknown>): boolean {
  return item.state === 'running' && item.nextPage === undefined && item.partitionCount === undefined;
}
