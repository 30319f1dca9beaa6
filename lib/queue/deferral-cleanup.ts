import {
  DeleteScheduleCommand,
  ListSchedulesCommand,
  ResourceNotFoundException,
  type SchedulerClient,
} from '@aws-sdk/client-scheduler';

/**
 * The pending deferral schedules of a run (one-time `at(...)` schedules that would send a deferred
 * page later), found by name: every deferral schedule name starts with `defer-<runId>-`
 * (`deferralSchedulePrefix` in page-queue.ts). Cancelling a run deletes them, so a cancelled run
 * leaves nothing behind that fires later.
 */
export class DeferralSchedules {
  constructor(
    private readonly scheduler: SchedulerClient,
    private readonly groupName: string,
  ) {}

  /** Name prefix shared by every deferral schedule of `runId`. */
  static prefixOf(runId: string): string {
    return `defer-${runId}-`;
  }

  /** Names of the run's schedules still in the group. */
  async namesFor(runId: string): Promise<string[]> {
    const names: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.scheduler.send(
        new ListSchedulesCommand({
          GroupName: this.groupName,
          NamePrefix: DeferralSchedules.prefixOf(runId),
          NextToken: token,
        }),
      );
      for (const schedule of page.Schedules ?? []) if (schedule.Name) names.push(schedule.Name);
      token = page.NextToken;
    } while (token);
    return names;
  }

  /** Deletes every pending deferral schedule of `runId`; returns the names deleted. */
  async deleteFor(runId: string): Promise<string[]> {
    const names = await this.namesFor(runId);
    for (const name of names) {
      try {
        await this.scheduler.send(new DeleteScheduleCommand({ Name: name, GroupName: this.groupName }));
      } catch (error) {
        // Fired and deleted itself (ActionAfterCompletion) between the list and the delete.
        if (!(error instanceof ResourceNotFoundException)) throw error;
      }
    }
    return names;
  }
}
