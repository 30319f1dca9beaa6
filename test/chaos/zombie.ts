import type { EngineDeps, StepResult } from '../../lib/engine/index.js';
import { processPage } from '../../lib/engine/index.js';
import type { PageMessage } from '../../lib/queue/page-message.js';
import type { ZombieFault } from './plan.js';

/**
 * A worker that froze mid-page, as in the zombie test of crash-recovery.test.ts: it processes a
 * copy of a page message and stops at `pauseAt` with its heartbeats suppressed (a stopped
 * process does not beat), until thawed. By then the reaper has fenced the run, and every
 * write it still makes must be refused or harmless.
 */
export class Zombie {
  readonly result: Promise<StepResult | { outcome: 'error'; reason: string }>;
  /** Resolves when the zombie froze, or when it ended without ever freezing. */
  readonly settledOrPaused: Promise<void>;
  private paused = true;
  private release!: () => void;
  private reached!: () => void;
  pausedOnce = false;
  thawed = false;

  constructor(
    deps: EngineDeps,
    readonly message: PageMessage,
    fault: ZombieFault,
  ) {
    const thawed = new Promise<void>((resolve) => {
      this.release = resolve;
    });
    const reachedPause = new Promise<void>((resolve) => {
      this.reached = resolve;
    });
    const freeze = async () => {
      this.pausedOnce = true;
      this.reached();
      await thawed;
    };
    // Every worker beats on its page chain (the run's own or a partition's).
    const chains = Object.create(deps.chains) as EngineDeps['chains'];
    chains.heartbeat = async (...args) => (this.paused ? undefined : deps.chains.heartbeat(...args));
    const items = Object.create(deps.items) as EngineDeps['items'];
    items.loadAll = async (...args) => {
      if (fault.pauseAt === 'beforeLoad' && !this.pausedOnce) await freeze();
      return deps.items.loadAll(...args);
    };
    const zombieDeps: EngineDeps = {
      ...deps,
      chains,
      items,
      hooks: {
        async at(point) {
          if (point === 'afterLoad' && fault.pauseAt === 'afterLoad') await freeze();
        },
      },
    };
    this.result = processPage(zombieDeps, message).catch((error: unknown) => ({
      outcome: 'error' as const,
      reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    }));
    this.settledOrPaused = Promise.race([reachedPause, this.result.then(() => undefined)]);
  }

  /** Thaws the zombie: its heartbeat and its next writes run again. */
  thaw(): void {
    this.thawed = true;
    this.paused = false;
    this.release();
  }
}

/** What became of a trial's zombie. */
export interface ZombieRecord {
  readonly fault: ZombieFault;
  readonly epoch: number;
  /** The reaper fenced the run while the zombie was frozen: every write it makes must be refused. */
  readonly fencedBeforeThaw: boolean;
  readonly result: StepResult | { outcome: string; reason: string };
}

/**
 * The zombie's life in a trial: it takes the message of the worker that crashed on its page,
 * freezes, learns nothing of the fence the reaper puts up meanwhile, and thaws when its plan says.
 */
export class ZombieWatch {
  private zombie: Zombie | null = null;
  private epoch = 0;
  private task: Promise<void> = Promise.resolve();
  private fenced = false;
  /** True from the crash until the zombie froze: the run is not stalled yet, the zombie still works. */
  starting = false;

  constructor(
    private readonly deps: EngineDeps,
    private readonly fault: ZombieFault,
    private readonly log: (line: string) => void,
  ) {}

  /** Called by the crash hook of the zombie's page: the dying worker's message goes to the zombie. */
  launch(context: { runId: string; epoch: number; page: number; partition?: number }): void {
    if (this.zombie || this.starting) return;
    this.starting = true;
    this.task = (async () => {
      const run = await this.deps.runs.require(context.runId);
      const { partition } = context;
      // A partition's page continues from its partition's checkpoint.
      const chain = partition === undefined ? run : run.partitions?.[String(partition)];
      const cursor = context.page === 1 ? null : chain?.checkpoint?.cursor;
      if (cursor === undefined || (context.page > 1 && chain?.checkpoint?.page !== context.page - 1)) {
        this.log(`zombie skipped: no checkpoint for page ${context.page}`);
        return;
      }
      const { runId, sourceId } = run;
      const message = {
        v: 1 as const,
        runId,
        sourceId,
        epoch: context.epoch,
        page: context.page,
        cursor,
        ...(partition !== undefined ? { partition } : {}),
      };
      this.zombie = new Zombie(this.deps, message, this.fault);
      this.epoch = context.epoch;
      await this.zombie.settledOrPaused;
      const state = this.zombie.pausedOnce ? `frozen ${this.fault.pauseAt}` : 'ended without freezing';
      this.log(`zombie took page ${context.page} at epoch ${context.epoch}; ${state}`);
    })().finally(() => {
      this.starting = false;
    });
  }

  /** The reaper fenced the run. */
  noteFence(): void {
    if (this.zombie?.pausedOnce && !this.zombie.thawed) this.fenced = true;
  }

  /** Thaws the zombie when its release moment came: after the fence, once the run moved past its page, or at the end. */
  thawIfDue(run: { epoch: number; nextPage: number }, ending: boolean): void {
    const zombie = this.zombie;
    if (!zombie?.pausedOnce || zombie.thawed) return;
    const { release, page } = this.fault;
    const due =
      ending ||
      (this.fenced && release === 'afterFence') ||
      (this.fenced && release === 'afterProgress' && run.nextPage > page);
    if (!due) return;
    this.log(
      `zombie thawed (${ending ? 'run ended' : release}; run at epoch ${run.epoch} page ${run.nextPage})`,
    );
    zombie.thaw();
  }

  /** Thaws the zombie if it still sleeps and waits for its last word. */
  async settle(): Promise<ZombieRecord | null> {
    await this.task;
    const zombie = this.zombie;
    if (!zombie) return null;
    const fencedBeforeThaw = this.fenced;
    if (!zombie.thawed) this.thawIfDue(await this.deps.runs.require(zombie.message.runId), true);
    const result = await Promise.race([
      zombie.result,
      new Promise<{ outcome: string; reason: string }>((resolve) =>
        setTimeout(
          () => resolve({ outcome: 'hung', reason: 'it did not stop within 15 s of its thaw' }),
          15_000,
        ),
      ),
    ]);
    this.log(`zombie ended: ${JSON.stringify(result)}`);
    return { fault: this.fault, epoch: this.epoch, fencedBeforeThaw, result };
  }
}
