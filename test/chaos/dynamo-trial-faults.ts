import type { DynamoFaultCounts, DynamoFaultPlan, DynamoFaults } from '../../lib/aws/dynamo-faults.js';

/**
 * The DynamoDB faults every trial plays through the fault layer (lib/aws/dynamo-faults.ts) on the
 * in-process engine's clients: transactions cancelled for a conflict, single-item writes refused
 * with `TransactionConflictException`, single-item writes applied and answered with a 500 (the
 * SDK sends them again), and eventually consistent reads (every index query among them) that lag
 * behind writes. Seeded per trial; the worker process talks to the emulator directly.
 *
 * Knobs (chances in [0, 1]): `CHAOS_TRANSACTION_CONFLICTS` (default 0.1), `CHAOS_WRITE_CONFLICTS`
 * (0.02), `CHAOS_LOST_ANSWERS` (0.01), `CHAOS_STALE_READS` (0.5), `CHAOS_STALE_MS` (how far a
 * stale read lags, 1000 ms).
 * `CHAOS_DYNAMO_FAULTS=0` switches them off (and the check that they happened).
 */
export function dynamoFaultPlan(
  seed: number,
  now: () => number,
  env: NodeJS.ProcessEnv = process.env,
): DynamoFaultPlan {
  if (env.CHAOS_DYNAMO_FAULTS === '0') return { seed };
  const knob = (name: string, fallback: number) => {
    const value = Number(env[name] ?? fallback);
    return Number.isFinite(value) && value >= 0 ? value : fallback;
  };
  return {
    seed: seed ^ 0x2c1b3c6d,
    transactionConflict: knob('CHAOS_TRANSACTION_CONFLICTS', 0.1),
    writeConflict: knob('CHAOS_WRITE_CONFLICTS', 0.02),
    lostAnswer: knob('CHAOS_LOST_ANSWERS', 0.01),
    staleRead: knob('CHAOS_STALE_READS', 0.5),
    staleMs: knob('CHAOS_STALE_MS', 1_000),
    // On the trial's clock: the reaper judges a backlog minutes later on it, in milliseconds of wall time.
    now,
  };
}

/** How many faults of each kind the layer injected between two readings of its counts. */
export function faultsSince(before: DynamoFaultCounts, faults: DynamoFaults): DynamoFaultCounts {
  const now = faults.counts;
  return {
    transactionConflicts: now.transactionConflicts - before.transactionConflicts,
    writeConflicts: now.writeConflicts - before.writeConflicts,
    inFlightConflicts: now.inFlightConflicts - before.inFlightConflicts,
    staleReads: now.staleReads - before.staleReads,
    lostAnswers: now.lostAnswers - before.lostAnswers,
  };
}

/**
 * The trial's check that the layer did inject: a trial that met no conflict proves nothing about
 * coping with one. Stale reads are not required of every trial: most of the engine's reads are
 * consistent, and the index reads that are not (the reaper's) lag only when they follow a write
 * closely; the suite checks that some trial met them.
 */
export function checkFaultsInjected(plan: DynamoFaultPlan, injected: DynamoFaultCounts): string[] {
  const conflicts = injected.transactionConflicts + injected.writeConflicts + injected.inFlightConflicts;
  const planned = (plan.transactionConflict ?? 0) + (plan.writeConflict ?? 0) > 0;
  return planned && conflicts === 0 ? ['the DynamoDB fault layer injected no conflict in this trial'] : [];
}
