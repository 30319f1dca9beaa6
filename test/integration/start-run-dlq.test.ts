import { GetScheduleCommand } from '@aws-sdk/client-scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { LOCAL_SCHEDULER_ROLE_ARN } from '../../lib/engine/index.js';
import { LOCAL_START_RUN_ARN, SourceSchedules } from '../../lib/queue/source-schedules.js';
import { setUpTestAws, type TestAws } from '../support/aws.js';

/** Source schedules name the start-run DLQ, so a start Scheduler cannot deliver is kept, not dropped. */

let aws: TestAws;
const DLQ = 'arn:aws:sqs:us-east-1:123456789012:harvester-start-run-dlq';

beforeAll(async () => {
  aws = await setUpTestAws('start-run-dlq');
});
afterAll(() => destroyAwsClients(aws.clients));

const schedulesWith = (deadLetterArn: string | undefined) =>
  new SourceSchedules(aws.clients.scheduler, {
    groupName: aws.names.scheduleGroup,
    targetArn: LOCAL_START_RUN_ARN,
    roleArn: LOCAL_SCHEDULER_ROLE_ARN,
    deadLetterArn,
  });

async function deadLetterOf(sourceId: string): Promise<string | undefined> {
  const [name] = await schedulesWith(undefined).names(sourceId);
  const schedule = await aws.clients.scheduler.send(
    new GetScheduleCommand({ Name: name, GroupName: aws.names.scheduleGroup }),
  );
  return schedule.Target?.DeadLetterConfig?.Arn;
}

describe('source schedules and the start-run DLQ', () => {
  it('gives every source schedule the DLQ as its dead-letter target', async () => {
    await schedulesWith(DLQ).reconcile('nightly', [{ expression: 'rate(1 day)', mode: 'incremental' }]);
    expect(await deadLetterOf('nightly')).toBe(DLQ);
  });

  it('updates a schedule created before the DLQ existed', async () => {
    await schedulesWith(undefined).reconcile('older', [{ expression: 'rate(1 day)', mode: 'full' }]);
    expect(await deadLetterOf('older')).toBeUndefined();
    const report = await schedulesWith(DLQ).reconcile('older', [{ expression: 'rate(1 day)', mode: 'full' }]);
    expect(report.updated).toHaveLength(1);
    expect(await deadLetterOf('older')).toBe(DLQ);
  });
});
