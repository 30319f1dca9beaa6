import { createHash } from 'node:crypto';
import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  ResourceNotFoundException,
  type SchedulerClient,
  UpdateScheduleCommand,
  ValidationException,
} from '@aws-sdk/client-scheduler';
import type { SourceSchedule } from '../store/sources.js';

/** ARN the local runtime answers for the start-run function (source schedules target it off AWS). */
export const LOCAL_START_RUN_ARN = 'arn:aws:lambda:us-east-1:123456789012:function:harvester-start-run';

/**
 * A source's recurring schedules as EventBridge Scheduler schedules: each schedule
 * of a source is one Scheduler schedule in the Harvester group that invokes the start-run target
 * with `{sourceId, mode, schedule, scheduledTime, executionId}`. Names are deterministic, so reconciling is idempotent: an API retry
 * after a partial failure converges on the same set instead of duplicating schedules.
 */

/**
 * Scheduler's context attributes, which it replaces in a target's input at each invocation: the
 * firing's scheduled time (`2026-12-01T03:00:00Z`), the same for every delivery of that firing,
 * and the id of this invocation. The start-run target drops a firing it has already started.
 */
export const SCHEDULED_TIME_ATTRIBUTE = '<aws.scheduler.scheduled-time>';
export const EXECUTION_ID_ATTRIBUTE = '<aws.scheduler.execution-id>';

/** Most schedules one source may have; keeps schedule names to one digit and a source's footprint small. */
export const MAX_SCHEDULES_PER_SOURCE = 10;

const NAME_LIMIT = 64;

/**
 * Prefix of every schedule name of a source: `src-<sourceId>-`. Ids too long for Scheduler's
 * 64-character names are shortened with a hash after a `.` (a character source ids never hold),
 * so two sources can never share a prefix.
 */
export function scheduleNamePrefix(sourceId: string): string {
  const plain = `src-${sourceId}-`;
  if (plain.length + 1 <= NAME_LIMIT) return plain;
  const hash = createHash('sha256').update(sourceId).digest('hex').slice(0, 12);
  return `src-${sourceId.slice(0, 40)}.${hash}-`;
}

/** Deterministic name of a source's n-th schedule (`src-nightly-0`). */
export function scheduleName(sourceId: string, index: number): string {
  return `${scheduleNamePrefix(sourceId)}${index}`;
}

/** Scheduler refused a schedule (a cron it cannot run, say); `index` is its position in the source's list. */
export class SourceScheduleError extends Error {
  override readonly name = 'SourceScheduleError';
  constructor(
    message: string,
    readonly index: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** What a reconciliation did, by schedule name. */
export interface ReconcileReport {
  readonly created: string[];
  readonly updated: string[];
  readonly deleted: string[];
  readonly unchanged: string[];
}

/** Where source schedules live and what they invoke. */
export interface SourceSchedulesOptions {
  readonly groupName: string;
  /** The start-run function (locally `LOCAL_START_RUN_ARN`, which the local runtime answers). */
  readonly targetArn: string;
  /** The role Scheduler assumes to invoke the target. */
  readonly roleArn: string;
  /**
   * Where Scheduler puts a start it could not deliver after its retries (the start-run DLQ on
   * AWS, which an alarm watches). Absent locally.
   */
  readonly deadLetterArn?: string | undefined;
}

/** Creates, updates and removes a source's Scheduler schedules. */
export class SourceSchedules {
  constructor(
    private readonly scheduler: SchedulerClient,
    readonly options: SourceSchedulesOptions,
  ) {}

  /**
   * Makes Scheduler hold exactly `schedules` for the source: creates new, updates changed, deletes
   * removed. A paused source's schedules are held DISABLED: Scheduler keeps them and fires none.
   */
  async reconcile(
    sourceId: string,
    schedules: readonly SourceSchedule[],
    options: { readonly paused?: boolean } = {},
  ): Promise<ReconcileReport> {
    const report: ReconcileReport = { created: [], updated: [], deleted: [], unchanged: [] };
    const existing = new Set(await this.names(sourceId));
    for (const [index, schedule] of schedules.entries()) {
      const name = scheduleName(sourceId, index);
      const input = this.scheduleInput(name, sourceId, schedule, options.paused ?? false);
      const outcome = existing.has(name)
        ? await this.updateIfChanged(input, index)
        : await this.create(input, index);
      report[outcome].push(name);
      existing.delete(name);
    }
    for (const name of existing) {
      await this.deleteQuietly(name);
      report.deleted.push(name);
    }
    return report;
  }

  /** Removes every schedule of the source (idempotent). Returns the names removed. */
  async remove(sourceId: string): Promise<string[]> {
    return (await this.reconcile(sourceId, [])).deleted;
  }

  /**
   * What Scheduler holds for one schedule: its state and when it was created or last changed (a
   * `rate(...)` counts its periods from there); undefined when there is no such schedule.
   */
  async describe(name: string): Promise<{ state: string; since: number } | undefined> {
    try {
      const s = await this.scheduler.send(
        new GetScheduleCommand({ Name: name, GroupName: this.options.groupName }),
      );
      const since = (s.LastModificationDate ?? s.CreationDate)?.getTime();
      return { state: s.State ?? 'ENABLED', since: since ?? Date.now() };
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return undefined;
      throw error;
    }
  }

  /** Names of the source's schedules in Scheduler, in index order. */
  async names(sourceId: string): Promise<string[]> {
    const prefix = scheduleNamePrefix(sourceId);
    const names: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.scheduler.send(
        new ListSchedulesCommand({ GroupName: this.options.groupName, NamePrefix: prefix, NextToken: token }),
      );
      for (const s of page.Schedules ?? []) {
        // The prefix alone would also match `src-<sourceId>-x-0` of another source `<sourceId>-x`.
        if (s.Name && /^\d+$/.test(s.Name.slice(prefix.length)) && s.Name.startsWith(prefix))
          names.push(s.Name);
      }
      token = page.NextToken;
    } while (token);
    return names.sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length)));
  }

  private scheduleInput(
    name: string,
    sourceId: string,
    schedule: SourceSchedule,
    paused: boolean,
  ): CreateScheduleCommandInput {
    return {
      Name: name,
      GroupName: this.options.groupName,
      Description: `Harvester: ${schedule.mode} run of source ${sourceId}`,
      ScheduleExpression: schedule.expression,
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: paused ? 'DISABLED' : 'ENABLED',
      Target: {
        Arn: this.options.targetArn,
        RoleArn: this.options.roleArn,
        Input: JSON.stringify({
          sourceId,
          mode: schedule.mode,
          schedule: name,
          scheduledTime: SCHEDULED_TIME_ATTRIBUTE,
          executionId: EXECUTION_ID_ATTRIBUTE,
        }),
        ...(this.options.deadLetterArn ? { DeadLetterConfig: { Arn: this.options.deadLetterArn } } : {}),
      },
    };
  }

  private async create(
    input: CreateScheduleCommandInput,
    index: number,
  ): Promise<'created' | 'updated' | 'unchanged'> {
    try {
      await this.send(new CreateScheduleCommand(input), index);
      return 'created';
    } catch (error) {
      // Created concurrently (or listed before an eventually consistent create): converge by update.
      if (!(error instanceof ConflictException)) throw error;
      return this.updateIfChanged(input, index);
    }
  }

  private async updateIfChanged(
    input: CreateScheduleCommandInput,
    index: number,
  ): Promise<'updated' | 'unchanged'> {
    const current = await this.scheduler.send(
      new GetScheduleCommand({ Name: input.Name, GroupName: input.GroupName }),
    );
    const same =
      current.ScheduleExpression === input.ScheduleExpression &&
      current.State === input.State &&
      current.Target?.Arn === input.Target?.Arn &&
      current.Target?.RoleArn === input.Target?.RoleArn &&
      current.Target?.Input === input.Target?.Input &&
      current.Target?.DeadLetterConfig?.Arn === input.Target?.DeadLetterConfig?.Arn;
    if (same) return 'unchanged';
    await this.send(new UpdateScheduleCommand(input), index);
    return 'updated';
  }

  private async send(command: CreateScheduleCommand | UpdateScheduleCommand, index: number): Promise<void> {
    try {
      await this.scheduler.send(command as CreateScheduleCommand);
    } catch (error) {
      if (error instanceof ValidationException)
        throw new SourceScheduleError(error.message, index, { cause: error });
      throw error;
    }
  }

  private async deleteQuietly(name: string): Promise<void> {
    try {
      await this.scheduler.send(new DeleteScheduleCommand({ Name: name, GroupName: this.options.groupName }));
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException)) throw error;
    }
  }
}
