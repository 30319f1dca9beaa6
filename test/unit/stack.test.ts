import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { addHarvester } from '../../infra/harvester-app.js';
import type { HarvesterStack } from '../../infra/stack.js';
import { PAGE_DLQ_RETENTION_SECONDS, WORKER_TIMEOUT_SECONDS } from '../../lib/config/constants.js';
import { EnvSchema } from '../../lib/config/env.js';
import { TABLES } from '../../lib/resources/definitions.js';

// Synthesized once for the whole file: bundling five functions with esbuild takes seconds.
// The app gets cdk.json's context (feature flags included), so this is the template `cdk synth` emits.
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};
let app: App;
let stack: HarvesterStack;
let template: Template;

beforeAll(() => {
  app = new App({ context: cdkJson.context, outdir: mkdtempSync(join(tmpdir(), 'harvester-cdk-')) });
  stack = addHarvester(app);
  template = Template.fromStack(stack);
}, 180_000);

type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };

const logicalId = (element: { node: { defaultChild?: unknown } }): string =>
  stack.getLogicalId(element.node.defaultChild as CfnElement);

const resourcesOf = (type: string): Record<string, Resource> =>
  template.findResources(type) as Record<string, Resource>;

const functionProps = (fn: { node: { defaultChild?: unknown } }): Record<string, unknown> => {
  const resource = resourcesOf('AWS::Lambda::Function')[logicalId(fn)];
  if (!resource) throw new Error('function not in template');
  return resource.Properties;
};

describe('DynamoDB tables', () => {
  it('creates exactly the four tables of the definitions', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', Object.keys(TABLES).length);
  });

  it.each(Object.entries(TABLES))('%s is on-demand, recoverable, encrypted and protected', (_key, def) => {
    const keySchema = [
      { AttributeName: def.partitionKey.name, KeyType: 'HASH' },
      ...('sortKey' in def ? [{ AttributeName: def.sortKey.name, KeyType: 'RANGE' }] : []),
    ];
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      Properties: {
        KeySchema: keySchema,
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: true,
        GlobalSecondaryIndexes:
          def.indexes.length === 0
            ? Match.absent()
            : def.indexes.map((index) => ({
                IndexName: index.indexName,
                KeySchema: [
                  { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
                  ...('sortKey' in index ? [{ AttributeName: index.sortKey.name, KeyType: 'RANGE' }] : []),
                ],
                Projection: { ProjectionType: 'ALL' },
              })),
      },
    });
  });
});

describe('page queue and DLQ', () => {
  const queue = () => resourcesOf('AWS::SQS::Queue')[logicalId(stack.messaging.pageQueue)]!.Properties;
  const dlq = () => resourcesOf('AWS::SQS::Queue')[logicalId(stack.messaging.pageDlq)]!.Properties;

  it('redrives to the DLQ after at least five receives', () => {
    const redrive = queue().RedrivePolicy as { maxReceiveCount: number; deadLetterTargetArn: unknown };
    expect(redrive.maxReceiveCount).toBeGreaterThanOrEqual(5);
    expect(redrive.deadLetterTargetArn).toEqual({
      'Fn::GetAtt': [logicalId(stack.messaging.pageDlq), 'Arn'],
    });
  });

  it('keeps dead-lettered pages for 14 days', () => {
    expect(dlq().MessageRetentionPeriod).toBe(1_209_600);
    expect(PAGE_DLQ_RETENTION_SECONDS).toBe(1_209_600);
  });

  it('hides a message for at least six worker timeouts', () => {
    const workerTimeout = functionProps(stack.pipeline.worker.fn).Timeout as number;
    expect(workerTimeout).toBe(WORKER_TIMEOUT_SECONDS);
    expect(queue().VisibilityTimeout as number).toBeGreaterThanOrEqual(6 * workerTimeout);
    expect(dlq().VisibilityTimeout as number).toBeGreaterThanOrEqual(
      functionProps(stack.pipeline.drain.fn).Timeout as number,
    );
  });

  it('encrypts both queues and denies plain-HTTP access', () => {
    expect(queue().SqsManagedSseEnabled).toBe(true);
    expect(dlq().SqsManagedSseEnabled).toBe(true);
    template.resourcePropertiesCountIs(
      'AWS::SQS::QueuePolicy',
      {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      },
      2,
    );
  });
});

describe('functions', () => {
  it('runs all five on nodejs22.x, arm64, with their own log group', () => {
    const functions = Object.values(resourcesOf('AWS::Lambda::Function'));
    expect(functions).toHaveLength(5);
    for (const fn of functions) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'] });
      expect(fn.Properties.LoggingConfig).toMatchObject({ LogGroup: { Ref: expect.any(String) } });
      expect((fn.Properties.Environment as { Variables: object }).Variables).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'harvester',
      });
    }
  });

  it('lets the page worker re-enqueue itself without Lambda cutting the loop', () => {
    expect(functionProps(stack.pipeline.worker.fn)).toMatchObject({
      RecursiveLoop: 'Allow',
      MemorySize: 512,
    });
  });

  it('sets only variables the runtime config schema knows, besides Powertools and Node options', () => {
    const known = new Set([
      ...Object.keys(EnvSchema.shape),
      'POWERTOOLS_SERVICE_NAME',
      'POWERTOOLS_METRICS_NAMESPACE',
      'NODE_OPTIONS',
    ]);
    for (const fn of Object.values(resourcesOf('AWS::Lambda::Function'))) {
      const names = Object.keys((fn.Properties.Environment as { Variables: object }).Variables);
      expect(names.filter((name) => !known.has(name))).toEqual([]);
      expect(names).toEqual(expect.arrayContaining(['SYNC_RUNS_TABLE', 'PAGE_QUEUE_URL', 'EVENT_BUS_NAME']));
    }
  });

  it('gives the API the Scheduler role and the start-run target', () => {
    const env = (functionProps(stack.adminApi.handler.fn).Environment as { Variables: object }).Variables;
    expect(env).toMatchObject({
      SCHEDULER_ROLE_ARN: { 'Fn::GetAtt': [logicalId(stack.scheduling.schedulerRole), 'Arn'] },
      START_RUN_TARGET_ARN: { 'Fn::GetAtt': [logicalId(stack.scheduling.startRun.fn), 'Arn'] },
    });
  });
});

describe('event source mappings', () => {
  it('feeds the worker small batches with partial failures and a concurrency bound', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(stack.pipeline.worker.fn) },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack.messaging.pageQueue), 'Arn'] },
      BatchSize: Match.anyValue(),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 10 },
    });
    const worker = Object.values(resourcesOf('AWS::Lambda::EventSourceMapping')).find(
      (esm) => (esm.Properties.FunctionName as { Ref: string }).Ref === logicalId(stack.pipeline.worker.fn),
    );
    expect(worker?.Properties.BatchSize as number).toBeLessThanOrEqual(5);
  });

  it('drains the DLQ with partial batch failures', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(stack.pipeline.drain.fn) },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack.messaging.pageDlq), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });
});

describe('schedules', () => {
  it('ticks the reaper every minute, exactly on time', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 minute)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: { 'Fn::GetAtt': [logicalId(stack.scheduling.reaper.fn), 'Arn'] } },
    });
  });

  it('lets Scheduler, and only schedules of the Harvester group, assume the Scheduler role', () => {
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          Match.objectLike({
            Principal: { Service: 'scheduler.amazonaws.com' },
            Condition: {
              StringEquals: {
                'aws:SourceAccount': Match.anyValue(),
                'aws:SourceArn': { 'Fn::GetAtt': [logicalId(stack.scheduling.group), 'Arn'] },
              },
            },
          }),
        ],
      },
    });
  });
});

describe('admin API', () => {
  it('requires IAM authorization on every route', () => {
    const routes = Object.values(resourcesOf('AWS::ApiGatewayV2::Route'));
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes) expect(route.Properties.AuthorizationType).toBe('AWS_IAM');
  });

  it('logs every request as JSON and throttles the stage', () => {
    const stage = Object.values(resourcesOf('AWS::ApiGatewayV2::Stage'));
    expect(stage).toHaveLength(1);
    const props = stage[0]!.Properties as {
      AccessLogSettings: { DestinationArn: unknown; Format: string };
      DefaultRouteSettings: { ThrottlingRateLimit: number; ThrottlingBurstLimit: number };
    };
    expect(JSON.parse(props.AccessLogSettings.Format)).toHaveProperty('requestId', '$context.requestId');
    expect(props.DefaultRouteSettings.ThrottlingRateLimit).toBeGreaterThan(0);
    expect(props.DefaultRouteSettings.ThrottlingBurstLimit).toBeGreaterThan(0);
  });
});

describe('run outcome notifications', () => {
  const topicId = () => logicalId(stack.notifications.topic);

  it('routes failed runs and runs with errors from the Harvester bus to the topic', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      EventBusName: { Ref: logicalId(stack.messaging.bus) },
      EventPattern: {
        source: ['harvester'],
        'detail-type': ['SyncRun Failed', 'SyncRun Succeeded With Errors'],
      },
      Targets: [Match.objectLike({ Arn: { Ref: topicId() } })],
    });
  });

  it('encrypts the topic with a rotating key and denies plain-HTTP publishing', () => {
    template.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: { 'Fn::GetAtt': [logicalId(stack.notifications.key), 'Arn'] },
    });
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });
});

describe('alarms', () => {
  const alarms = () => Object.values(resourcesOf('AWS::CloudWatch::Alarm')).map((a) => a.Properties);

  it('fires as soon as a message sits in the page DLQ', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        { Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack.messaging.pageDlq), 'QueueName'] } },
      ],
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
    });
  });

  it.each([
    ['reaper errors', 'AWS/Lambda', 'Errors', () => stack.scheduling.reaper.fn],
    ['worker errors', 'AWS/Lambda', 'Errors', () => stack.pipeline.worker.fn],
    ['worker throttles', 'AWS/Lambda', 'Throttles', () => stack.pipeline.worker.fn],
  ] as const)('watches %s', (_name, namespace, metric, fn) => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: namespace,
      MetricName: metric,
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(fn()) } }],
    });
  });

  it('watches failed runs through the Powertools EMF metric', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Harvester',
      MetricName: 'RunsFailed',
    });
  });

  it('sends every alarm to the notification topic', () => {
    expect(alarms().length).toBeGreaterThanOrEqual(5);
    for (const alarm of alarms()) {
      expect(alarm.AlarmActions).toEqual([{ Ref: logicalId(stack.notifications.topic) }]);
    }
  });

  it('puts the Harvester metrics and queue depths on the dashboard', () => {
    const body = JSON.stringify(Object.values(resourcesOf('AWS::CloudWatch::Dashboard'))[0]?.Properties);
    for (const metric of [
      'PagesCommitted',
      'ItemsLoaded',
      'Retries',
      'Deferrals',
      'DeadLetters',
      'DroppedMessages',
      'RunsSucceeded',
      'RunsFailed',
      'RunDurationSeconds',
      'ApproximateNumberOfMessagesVisible',
    ]) {
      expect(body).toContain(metric);
    }
  });
});

describe('IAM', () => {
  type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };
  const statements = (): Statement[] =>
    Object.values(resourcesOf('AWS::IAM::Policy')).flatMap(
      (p) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement,
    );
  const actionsOf = (s: Statement): string[] => (Array.isArray(s.Action) ? s.Action : [s.Action]);
  const policyOf = (role: { node: { defaultChild?: unknown } }): Statement[] => {
    const roleId = logicalId(role);
    return Object.values(resourcesOf('AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
      .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  };

  it('never grants a wildcard action', () => {
    const all = statements().flatMap(actionsOf);
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((action) => action === '*' || action.endsWith(':*'))).toEqual([]);
  });

  it('lets the API manage schedules and pass only the Scheduler role, only to Scheduler', () => {
    const api = policyOf(stack.adminApi.handler.role);
    expect(api.flatMap(actionsOf)).toEqual(
      expect.arrayContaining([
        'scheduler:CreateSchedule',
        'scheduler:UpdateSchedule',
        'scheduler:DeleteSchedule',
        'scheduler:GetSchedule',
        'scheduler:ListSchedules',
      ]),
    );
    expect(api).toContainEqual(
      expect.objectContaining({
        Action: 'iam:PassRole',
        Resource: { 'Fn::GetAtt': [logicalId(stack.scheduling.schedulerRole), 'Arn'] },
        Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
  });

  it('lets the worker create and delete deferral schedules, and nothing more in Scheduler', () => {
    const scheduler = policyOf(stack.pipeline.worker.role)
      .flatMap(actionsOf)
      .filter((a) => a.startsWith('scheduler:'));
    expect(scheduler.sort()).toEqual(['scheduler:CreateSchedule', 'scheduler:DeleteSchedule']);
    expect(policyOf(stack.pipeline.worker.role).flatMap(actionsOf)).toContain('iam:PassRole');
  });

  it('confines secret reads to the harvester/ prefix, and the cursor key to the API', () => {
    const cursorKey = stack.getLogicalId(stack.adminApi.cursorKey.node.defaultChild as CfnElement);
    const readsCursorKey = (s: Statement) =>
      JSON.stringify(s.Resource) === JSON.stringify({ Ref: cursorKey });
    const secretReads = statements().filter(
      (s) =>
        actionsOf(s).some((a) => a === 'ssm:GetParameter' || a === 'secretsmanager:GetSecretValue') &&
        !readsCursorKey(s),
    );
    expect(statements().filter(readsCursorKey)).toHaveLength(1);
    expect(policyOf(stack.adminApi.handler.role).some(readsCursorKey)).toBe(true);
    expect(secretReads.length).toBeGreaterThan(0);
    for (const s of secretReads)
      expect(JSON.stringify(s.Resource)).toMatch(/:(parameter\/|secret:)harvester\/\*/);
  });
});

describe('cdk-nag AwsSolutions', () => {
  const findings = (scope: App) =>
    new AwsSolutionsChecks()
      .validateScope(scope)
      .violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} @ ${r.constructPath}`));

  it('reports no unacknowledged finding on the stack', () => {
    expect(findings(app)).toEqual([]);
  });

  it('does report findings on a stack that breaks its rules (the check is live)', () => {
    const bare = new App();
    new sqs.Queue(new Stack(bare, 'Bare'), 'Queue');
    expect(findings(bare).join('\n')).toMatch(/AwsSolutions-SQS4/);
  });

  it('leaves no error annotation on the synthesized stack', () => {
    const artifact = app.synth().getStackArtifact(stack.artifactId);
    expect(
      artifact.messages.filter((m) => m.level === 'error').map((m) => `${m.id}: ${m.entry.data}`),
    ).toEqual([]);
  });
});

describe('outputs', () => {
  it.each([
    'ApiUrl',
    'SyncRunsTableName',
    'SourcesTableName',
    'DeadLettersTableName',
    'ItemsTableName',
    'PageQueueUrl',
    'PageDlqUrl',
    'EventBusName',
    'NotificationTopicArn',
  ])('exports %s', (name) => {
    template.hasOutput(name, {});
  });
});
