import type { DynamoFaultCounts } from '../../lib/aws/dynamo-faults.js';

/** The trials' DynamoDB faults, added up, and the suite's check that both kinds were met. */
export class FaultTally {
  trials = 0;
  readonly total: DynamoFaultCounts = {
    transactionConflicts: 0,
    writeConflicts: 0,
    inFlightConflicts: 0,
    staleReads: 0,
    lostAnswers: 0,
  };

  add(injected: DynamoFaultCounts): void {
    this.trials += 1;
    for (const key of Object.keys(this.total) as (keyof DynamoFaultCounts)[])
      this.total[key] += injected[key];
  }

  /**
   * Problems with what was injected: none when the faults are off (`CHAOS_DYNAMO_FAULTS=0`) or
   * stale reads are (`CHAOS_STALE_READS=0`), or for a replay of fewer than three trials.
   */
  check(env: NodeJS.ProcessEnv): string[] {
    if (env.CHAOS_DYNAMO_FAULTS === '0' || this.trials < 3) return [];
    const problems: string[] = [];
    const { transactionConflicts, writeConflicts, inFlightConflicts, staleReads, lostAnswers } = this.total;
    if (transactionConflicts + writeConflicts + inFlightConflicts === 0)
      problems.push(`no conflict was injected across ${this.trials} trials`);
    if (env.CHAOS_STALE_READS !== '0' && staleReads === 0)
      problems.push(`no stale read was served across ${this.trials} trials`);
    if (env.CHAOS_LOST_ANSWERS !== '0' && lostAnswers === 0)
      problems.push(`no write answer was lost across ${this.trials} trials`);
    return problems;
  }
}
