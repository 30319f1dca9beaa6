import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { afterAll, beforeAll } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import type { SyncRun } from '../../lib/run/model.js';
import type { ChainEnding } from '../../lib/store/chain-commit.js';
import { type ChainRef, chainKey } from '../../lib/store/chain-item.js';
import { ChainStore } from '../../lib/store/chains.js';
import { DeadLetterStore } from '../../lib/store/dead-letters.js';
import { RunLifecycle } from '../../lib/store/lifecycle.js';
import { SourceStore } from '../../lib/store/sources.js';
import { SyncRunStore } from '../../lib/store/sync-runs.js';
import { setUpTestAws, type TestAws } from './aws.js';
import { newRun } from './runs.js';

/** The time the chain store tests start their runs at. */
export const T0 = 1_700_000_000_000;

/** Two windows of a planned run; partition 1 is the open one, whose chain may wait for a tail pass. */
export const WINDOWS = [
  { from: null, until: '2024-01-01T00:00:00Z' },
  { from: '2024-01-01T00:00:00Z', until: null },
];

/**
 * The run and chain stores over one emulator, with the runs the chain store tests start from:
 * queued, running at epoch 1 (its own chain at page 1), planned into {@link WINDOWS}.
 */
export class ChainFixture {
  readonly runs: SyncRunStore;
  readonly chains: ChainStore;
  readonly lifecycle: RunLifecycle;

  constructor(readonly aws: TestAws) {
    this.runs = new SyncRunStore(aws.clients.doc, aws.names.syncRunsTable);
    this.chains = new ChainStore(aws.clients.doc, this.runs);
    this.lifecycle = new RunLifecycle(
      aws.clients.doc,
      this.runs,
      new SourceStore(aws.clients.doc, aws.names.sourcesTable),
      new DeadLetterStore(aws.clients.doc, aws.names.deadLettersTable),
    );
  }

  /** A queued run on a fresh source, its lock held. */
  async queuedRun(): Promise<SyncRun> {
    const sourceId = `src-${ulid().toLowerCase()}`;
    await this.lifecycle.sources.put(
      { sourceId, connector: 'rest-json', config: { baseUrl: 'http://x' }, schedules: [], configHash: 'h' },
      T0,
    );
    return this.lifecycle.createHoldingLock(newRun({ sourceId, now: T0 }));
  }

  /** A running run at epoch 1 whose own chain is at page 1. */
  async runningRun(): Promise<SyncRun> {
    const run = await this.queuedRun();
    await this.runs.start(run.runId, 1, T0 + 1);
    await this.chains.claim({ runId: run.runId }, 1, 1, T0 + 1);
    return run;
  }

  /** A running run planned into {@link WINDOWS}. */
  async plannedRun(): Promise<SyncRun> {
    const run = await this.runningRun();
    await this.chains.plan({ runId: run.runId, epoch: 1, windows: WINDOWS, total: 100, now: T0 + 2 });
    return run;
  }

  /** Commits `page` of a chain at epoch 1; `ending` set makes it the chain's last page. */
  commit(ref: ChainRef, page: number, ending?: ChainEnding) {
    return this.chains.commit({
      ref,
      epoch: 1,
      page,
      checkpoint: { cursor: ending === undefined ? `c-${page + 1}` : null, watermark: null },
      processed: 10,
      errors: 0,
      ...(ending === undefined ? {} : { ending }),
      now: T0 + 10 + page,
    });
  }

  /** Overwrites fields of a chain item as no store intent would: a state the conditions must judge alone. */
  async forceChain(ref: ChainRef, fields: Record<string, unknown>): Promise<void> {
    const names = Object.keys(fields);
    await this.aws.clients.doc.send(
      new UpdateCommand({
        TableName: this.aws.names.syncRunsTable,
        Key: chainKey(ref),
        UpdateExpression: `SET ${names.map((_, i) => `#f${i} = :f${i}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(names.map((name, i) => [`#f${i}`, name])),
        ExpressionAttributeValues: Object.fromEntries(names.map((name, i) => [`:f${i}`, fields[name]])),
      }),
    );
  }
}

/**
 * Sets up the test file's own tables (named from `hint`) and a {@link ChainFixture} over them
 * before its tests, hands the fixture to `ready`, and closes the clients after the file.
 */
export function useChainFixture(hint: string, ready: (fx: ChainFixture) => void): void {
  let aws: TestAws | undefined;
  beforeAll(async () => {
    aws = await setUpTestAws(hint);
    ready(new ChainFixture(aws));
  });
  afterAll(() => {
    if (aws) destroyAwsClients(aws.clients);
  });
}
