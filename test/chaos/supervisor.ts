import { RELIABILITY } from '../../lib/config/constants.js';
import { isActive, isTerminal, type SyncRun } from '../../lib/run/model.js';
import type { FakeSource } from '../../tools/fake-source/index.js';
import type { ChaosEnv } from './chaos-env.js';
import type { StepContext } from './hooks.js';
import { InFlightLedger, type InFlightSample } from './in-flight.js';
import { PausePlayer, type PauseRecord, type Reap } from './pauses.js';

export type { Reap };

import type { BacklogFault, KillFault, StormFault, TrialPlan, ZombieFault } from './plan.js';
import { type StormRecord, StormWatch } from './storm.js';
import { type ZombieRecord, ZombieWatch } from './zombie.js';

const SAMPLE_MS = 250;
/** Consecutive samples with nothing in flight that anyone alive holds: the run is stalled. */
const FAST_SAMPLES = 3;
/**
 * After a SIGKILL the ledger cannot tell whether the killed process took a message with it, so a
 * run is also stalled when nothing moved for this long: a live worker fetches (Retry-After ≤ 2 s),
 * loads and commits within it.
 */
const QUIET_MS = 3_000;
const RUN_DEADLINE_MS = 60_000;
/** A storm's pauses (≤ 8, each a schedule to fire and a throttled fetch) get this much more. */
const STORM_DEADLINE_MS = 30_000;
const SILENCE_MS = RELIABILITY.silenceThresholdMs + 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What happened to one run while it was watched. */
export interface RunRecord {
  readonly run: SyncRun;
  readonly reaps: readonly Reap[];
  readonly killed: boolean;
  readonly zombie: ZombieRecord | null;
  /** dlq_retry: the refs of the entries still open right after the last fence. */
  readonly openAtLastFence: ReadonlySet<string> | null;
  readonly timedOut: boolean;
  /** The backlog fault, when it fired: how long the successor waited, and whether the reaper saw the run waiting. */
  readonly backlog: {
    readonly waitedMs: number;
    readonly judgedWaiting: boolean;
    readonly fenced: number;
  } | null;
  /** The 429 storm, when one was planned for the run. */
  readonly storm: StormRecord | null;
  /** The deferrals the run waited out. */
  readonly pauses: PauseRecord;
}

interface Sample extends InFlightSample {
  readonly run: SyncRun;
  readonly signature: string;
}

/**
 * Watches one run to its end under faults and plays the operator's part: it SIGKILLs the worker
 * process when planned, keeps the zombie, and ticks the reaper — after moving the clock past the
 * 90 s silence — exactly when the run is stalled (nothing alive works on it), so every restart is
 * one a production reaper would also have made.
 */
export class Supervisor {
  readonly ledger: InFlightLedger;
  private readonly zombie: ZombieWatch | null;
  readonly storm: StormWatch | null;
  private readonly pauses: PausePlayer;
  private killed = false;
  private killArmedAt: number | null = null;

  constructor(
    private readonly env: ChaosEnv,
    private readonly fake: FakeSource,
    private readonly faults: {
      kill: KillFault | null;
      zombie: ZombieFault | null;
      backlog?: BacklogFault | null;
      storm?: StormFault | null;
    },
    private readonly log: (line: string) => void,
    plan?: TrialPlan,
  ) {
    const { clients, resources } = env.engine.aws;
    this.ledger = new InFlightLedger(env.workers, clients.sqs, resources.pageQueueUrl);
    this.zombie = faults.zombie ? new ZombieWatch(env.deps, faults.zombie, log) : null;
    const storm = faults.storm && plan ? new StormWatch(env, fake, plan, faults.storm, log) : null;
    this.storm = storm;
    this.pauses = new PausePlayer(env, log, (wakeAt) => storm?.endIfDue(wakeAt));
  }

  /** For the crash hook of the zombie's page. */
  launchZombie(context: StepContext): void {
    this.zombie?.launch(context);
  }

  /** Watches the run until it ends (or the deadline), then lets every straggler settle. */
  async watch(runId: string, mode: SyncRun['mode']): Promise<RunRecord> {
    const started = Date.now();
    const reaps: Reap[] = [];
    let openAtLastFence: Set<string> | null = null;
    let fast = 0;
    let lastSignature = '';
    let lastChange = Date.now();
    let lastPosition = '';
    let timedOut = false;
    let backlog: RunRecord['backlog'] = null;
    const deadlineMs = RUN_DEADLINE_MS + (this.storm ? STORM_DEADLINE_MS : 0);
    for (;;) {
      const s = await this.sample(runId);
      if (isTerminal(s.run.state)) break;
      if (Date.now() - started > deadlineMs) {
        timedOut = true;
        break;
      }
      const position = `epoch ${s.run.epoch} page ${s.run.nextPage}`;
      if (position !== lastPosition) this.log(`run at ${position} (${s.run.progress.processed} processed)`);
      lastPosition = position;
      await this.maybeKill(s);
      this.zombie?.thawIfDue(s.run, false);
      this.storm?.maybeStart(s.run.progress.pages);
      if (s.signature !== lastSignature) {
        lastSignature = s.signature;
        lastChange = Date.now();
      }
      const idle =
        isActive(s.run.state) && s.busy === 0 && s.visible === 0 && s.delayed === 0 && !this.zombie?.starting;
      fast = idle && s.unexplained <= 0 ? fast + 1 : 0;
      const settled = idle && (fast >= FAST_SAMPLES || Date.now() - lastChange >= QUIET_MS);
      // On the trial's clock: a storm's deferrals lie hours ahead of the wall clock.
      const deferred = s.run.deferredUntil !== null && s.run.deferredUntil > this.env.clock.now();
      if (settled && deferred) {
        // Waiting out a deferral: let the trial's clock run to the wake-up.
        reaps.push(...(await this.pauses.play(s.run, async (ms) => (await this.reapAfter(runId, ms)).mine)));
        fast = 0;
        lastChange = Date.now();
        await sleep(SAMPLE_MS);
        continue;
      }
      if (settled && !deferred) {
        const how = fast >= FAST_SAMPLES ? 'nothing in flight' : `quiet ${QUIET_MS} ms`;
        if (this.env.queue.held && this.faults.backlog) {
          // The run's successor waits in a backlogged queue: the reaper runs after the wait, then
          // the message is delivered. Any fence here is a restart no crash explains.
          const waitMs = this.faults.backlog.waitMs;
          const { mine, waiting } = await this.reapAfter(runId, waitMs);
          reaps.push(...mine);
          backlog = { waitedMs: waitMs, judgedWaiting: waiting, fenced: mine.length };
          const held = await this.env.queue.release();
          this.log(
            `backlog: page ${held?.page} (epoch ${held?.epoch}) waited ${waitMs} ms in the queue; reaper: ${JSON.stringify(mine)}, ${waiting ? 'judged waiting' : 'NOT judged waiting'}; delivered`,
          );
          fast = 0;
          lastChange = Date.now();
          await sleep(SAMPLE_MS);
          continue;
        }
        const mine = await this.reap(runId);
        reaps.push(...mine);
        this.log(`stalled at ${position} (${how}); reaper: ${JSON.stringify(mine)}`);
        if (mine.length > 0) {
          this.zombie?.noteFence();
          if (mode === 'dlq_retry') openAtLastFence = await this.openRefs(s.run.sourceId);
        }
        fast = 0;
        lastChange = Date.now();
      }
      await sleep(SAMPLE_MS);
    }
    // The source recovers for whatever runs next (an endless storm lasts as long as its run).
    this.storm?.endIfDue(this.env.clock.now(), true);
    const unfired = await this.env.queue.release();
    if (unfired) this.log(`backlog: page ${unfired.page} held until the run ended; delivered now`);
    const zombie = (await this.zombie?.settle()) ?? null;
    await this.quiesce();
    const run = await this.env.deps.runs.require(runId);
    const storm = this.storm?.record() ?? null;
    const pauses = this.pauses.record();
    return { run, reaps, killed: this.killed, zombie, openAtLastFence, timedOut, backlog, storm, pauses };
  }

  /** One reaper pass, 90 s of silence later as far as the reaper can tell. */
  private async reap(runId: string): Promise<Reap[]> {
    return (await this.reapAfter(runId, SILENCE_MS)).mine;
  }

  /** One reaper pass `ms` later; also whether it reported the run waiting in the queue. */
  private async reapAfter(runId: string, ms: number): Promise<{ mine: Reap[]; waiting: boolean }> {
    const before = await this.env.deps.runs.require(runId);
    this.env.clock.advance(ms);
    const report = await this.env.runtime.reapNow();
    // Re-sending a lost page at the same epoch (and re-publishing an outcome event) is not a
    // restart: only fences count as the reaper's actions on a run.
    // Nor is ending a partitioned run whose partitions all read their windows, or starting its
    // open window's tail pass, after its last worker died between the commit and that step.
    const mine = report.actions
      .filter((a) => a.runId === runId && !['resend', 'publish', 'finish', 'tail'].includes(a.action))
      .map(({ verdict, action }) => ({ verdict, action }));
    // A fence whose re-enqueue then failed (the send-failure fault) is missing from the report,
    // but it is a fence all the same: count it from the epoch.
    const after = await this.env.deps.runs.require(runId);
    if (mine.length === 0 && after.epoch > before.epoch) {
      mine.push({ verdict: after.resume?.reason ?? 'unknown', action: 'fence (send failed)' });
      this.log(`the reaper fenced epoch ${before.epoch} but its send failed; counted from the epoch`);
    }
    return { mine, waiting: report.waiting.some((w) => w.runId === runId) };
  }

  private async sample(runId: string): Promise<Sample> {
    const [run, inFlight] = await Promise.all([this.env.deps.runs.require(runId), this.ledger.sample()]);
    const { visible, notVisible, delayed, busy } = inFlight;
    const moved = [run.state, run.epoch, run.nextPage, run.heartbeatAt, run.updatedAt];
    const signature = JSON.stringify([
      ...moved,
      this.fake.stats().sourceRequests,
      visible,
      notVisible,
      delayed,
      busy,
    ]);
    return { ...inFlight, run, signature };
  }

  /** SIGKILLs the worker process once the run got far enough, preferably while it holds a message. */
  private async maybeKill(s: Sample): Promise<void> {
    const kill = this.faults.kill;
    if (!kill || this.killed || s.run.progress.pages < kill.afterPages) return;
    this.killArmedAt ??= Date.now();
    if (s.unexplained < 1 && Date.now() - this.killArmedAt < 2_500) return;
    await sleep(kill.delayMs);
    const [pid] = this.env.runtime.workerPids();
    this.killed = true;
    if (pid === undefined) {
      this.log('kill planned, but no worker process was up');
      return;
    }
    process.kill(pid, 'SIGKILL');
    const held = s.unexplained >= 1 ? 'held' : 'may have held';
    this.log(`SIGKILL worker process ${pid} (run at page ${s.run.nextPage}; it ${held} a message)`);
  }

  /**
   * Waits until no worker holds or will receive a message (duplicates and stale copies drained).
   * After a SIGKILL the count of dead in-flight messages is unknown, so calm then also means that
   * nothing moved for a while.
   */
  private async quiesce(): Promise<void> {
    const deadline = Date.now() + 6_000;
    let calm = 0;
    let lastMove = Date.now();
    let last = '';
    while (calm < 2 && Date.now() < deadline) {
      const s = await this.ledger.sample();
      const moved = JSON.stringify([s.visible, s.notVisible, s.delayed, this.fake.stats().sourceRequests]);
      if (moved !== last) {
        last = moved;
        lastMove = Date.now();
      }
      const still = s.busy === 0 && this.env.workers.busy === 0 && s.visible === 0 && s.delayed === 0;
      const settled = s.unexplained <= 0 || (this.killed && Date.now() - lastMove >= 1_500);
      calm = still && settled ? calm + 1 : 0;
      await sleep(SAMPLE_MS);
    }
  }

  private async openRefs(sourceId: string): Promise<Set<string>> {
    return new Set((await this.env.deps.deadLetters.listAll(sourceId)).map((e) => e.ref));
  }
}
