import { randomUUID } from 'node:crypto';
import {
  DeleteScheduleCommand,
  GetScheduleCommand,
  type GetScheduleCommandOutput,
  ListSchedulesCommand,
  ResourceNotFoundException,
  type SchedulerClient,
} from '@aws-sdk/client-scheduler';
import type { HarvesterLogger } from '../observability/logger.js';
import {
  nextCronTime,
  parseRecurringExpression,
  type RecurringExpression,
} from '../queue/schedule-expression.js';
import { EXECUTION_ID_ATTRIBUTE, SCHEDULED_TIME_ATTRIBUTE } from '../queue/source-schedules.js';

/** How long the firer trusts a schedule's details before reading them again. */
const DETAIL_REFRESH_MS = 30_000;

/** Delivers a fired schedule's input to its target. */
export type ScheduleTarget = (input: string) => Promise<void>;

/** Parses `at(yyyy-mm-ddThh:mm:ss)` (UTC) into epoch ms, or undefined for other expressions. */
export function parseAtExpression(expression: string): number | undefined {
  const match = /^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$/.exec(expression);
  return match ? Date.parse(`${match[1]}Z`) : undefined;
}

/** Parses `rate(N unit)` into a period in ms, or undefined. */
export function parseRateExpression(expression: string): number | undefined {
  const parsed = recurring(expression);
  return parsed?.kind === 'rate' ? parsed.periodMs : undefined;
}

/** Options of {@link ScheduleFirer}. */
export interface ScheduleFirerOptions {
  /**
   * Deliveries of each firing, the same input each time. Default 1; tests set 2 to play
   * Scheduler's at-least-once delivery (a firing delivered twice).
   */
  readonly deliveries?: number;
}

/**
 * A target input with Scheduler's context attributes filled in, as Scheduler does at each
 * invocation: the firing's scheduled time (whole seconds, UTC) and a fresh execution id.
 */
export function withContextAttributes(input: string, scheduledAt: number): string {
  const time = new Date(Math.floor(scheduledAt / 1_000) * 1_000).toISOString().replace('.000Z', 'Z');
  return input.replaceAll(SCHEDULED_TIME_ATTRIBUTE, time).replaceAll(EXECUTION_ID_ATTRIBUTE, randomUUID());
}

function recurring(expression: string): RecurringExpression | undefined {
  try {
    return parseRecurringExpression(expression);
  } catch {
    return undefined;
  }
}

/**
 * Plays EventBridge Scheduler for an emulator that stores schedules but never fires them:
 * one-time `at(...)` schedules fire once when due and are deleted (ActionAfterCompletion
 * DELETE); recurring `rate(...)` schedules fire every period from when this firer first saw
 * them; `cron(...)` schedules fire at each calendar time after the firer first saw them (UTC, as
 * the stack creates them), once per tick even if several occurrences passed. A DISABLED
 * schedule (a paused source) never fires, and counts afresh from when it is enabled again, as
 * Scheduler does not catch up on what it skipped. State is read from the listing on every tick,
 * so a pause or resume takes effect at the next tick. Targets are resolved by ARN. Inputs get
 * Scheduler's context attributes (`<aws.scheduler.scheduled-time>`: the occurrence's time).
 */
export class ScheduleFirer {
  private readonly firstSeen = new Map<string, number>();
  private readonly lastFired = new Map<string, number>();
  private readonly detailCache = new Map<string, { schedule: GetScheduleCommandOutput; readAt: number }>();

  constructor(
    private readonly scheduler: SchedulerClient,
    private readonly groupName: string,
    private readonly targets: ReadonlyMap<string, ScheduleTarget>,
    private readonly logger: HarvesterLogger,
    private readonly now: () => number = Date.now,
    private readonly options: ScheduleFirerOptions = {},
  ) {}

  /** Fires every due schedule once; returns the names fired. */
  async tick(): Promise<string[]> {
    const fired: string[] = [];
    let token: string | undefined;
    const listed = new Map<string, string | undefined>();
    do {
      const page = await this.scheduler.send(
        new ListSchedulesCommand({ GroupName: this.groupName, NextToken: token }),
      );
      for (const s of page.Schedules ?? []) if (s.Name) listed.set(s.Name, s.State);
      token = page.NextToken;
    } while (token);
    for (const name of this.detailCache.keys()) if (!listed.has(name)) this.detailCache.delete(name);
    for (const [name, state] of listed) {
      if (state === 'DISABLED') {
        this.firstSeen.delete(name);
        this.lastFired.delete(name);
        continue;
      }
      if (await this.fireIfDue(name, state)) fired.push(name);
    }
    return fired;
  }

  /**
   * A schedule's details, read again at most every {@link DETAIL_REFRESH_MS}: an idle local stack
   * then costs one ListSchedules per tick, not one GetSchedule per schedule per second. A
   * deleted schedule leaves the list at once; an edited one is seen within the refresh period.
   */
  private async details(name: string, now: number): Promise<GetScheduleCommandOutput | undefined> {
    const cached = this.detailCache.get(name);
    if (cached && now - cached.readAt < DETAIL_REFRESH_MS) return cached.schedule;
    try {
      const schedule = await this.scheduler.send(
        new GetScheduleCommand({ Name: name, GroupName: this.groupName }),
      );
      this.detailCache.set(name, { schedule, readAt: now });
      return schedule;
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return undefined;
      throw error;
    }
  }

  private async fireIfDue(name: string, listedState: string | undefined): Promise<boolean> {
    const schedule = await this.details(name, this.now());
    if (!schedule) return false;
    const expression = schedule.ScheduleExpression ?? '';
    const now = this.now();
    const at = parseAtExpression(expression);
    const parsed = recurring(expression);
    if (at !== undefined) {
      if (at > now) return false;
      await this.deliver(name, schedule.Target?.Arn, schedule.Target?.Input, at);
      await this.scheduler
        .send(new DeleteScheduleCommand({ Name: name, GroupName: this.groupName }))
        .catch(() => undefined);
      return true;
    }
    // The listing's state is fresh; the cached details may predate a resume.
    if (parsed !== undefined && (listedState ?? schedule.State) !== 'DISABLED') {
      if (!this.firstSeen.has(name)) this.firstSeen.set(name, now);
      const last = this.lastFired.get(name) ?? this.firstSeen.get(name)!;
      const due =
        parsed.kind === 'rate'
          ? last + parsed.periodMs
          : (nextCronTime(parsed, last) ?? Number.POSITIVE_INFINITY);
      if (now < due) return false;
      this.lastFired.set(name, now);
      await this.deliver(name, schedule.Target?.Arn, schedule.Target?.Input, due);
      return true;
    }
    return false;
  }

  /** Delivers one firing, scheduled for `scheduledAt`, to its target. */
  private async deliver(
    name: string,
    arn: string | undefined,
    input: string | undefined,
    scheduledAt: number,
  ): Promise<void> {
    const target = arn ? this.targets.get(arn) : undefined;
    if (!target) {
      this.logger.warn('schedule target unknown to the local runtime', { schedule: name, arn });
      return;
    }
    this.logger.info('firing schedule', { schedule: name });
    for (let delivery = 0; delivery < (this.options.deliveries ?? 1); delivery++)
      await target(withContextAttributes(input ?? '{}', scheduledAt));
  }
}
