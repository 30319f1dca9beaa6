import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { addHarvester } from '../../infra/harvester-app.js';
import type { HarvesterStack } from '../../infra/stack.js';
import { DEFAULT_SERVERS } from '../../lib/api/openapi.js';
import { PAGE_DLQ_RETENTION_SECONDS, WORKER_TIMEOUT_SECONDS } from '../../lib/config/constants.js';
import { EnvSchema } from '../../lib/config/env.js';
import { TABLES } from '../../lib/resources/definitions.js';

// Synthesized once for the whole file: bundling six functions with esbuild takes seconds.
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
                Projection: { ProjectionType: 'projection' in index ? index.projection : 'ALL' },
              })),
      },
    });
  });
});

describe('page queue and DLQ', () => {
  const queue = () =>
    resourcesOf('AWS::SQS::Queue')[logicalId(stack.harvester.messaging.pageQueue)]!.Properties;
  const dlq = () => resourcesOf('AWS::SQS::Queue')[logicalId(stack.harvester.messaging.pageDlq)]!.Properties;

  it('redrives to the DLQ after at least five receives', () => {
    const redrive = queue().RedrivePolicy as { maxReceiveCount: number; deadLetterTargetArn: unknown };
    expect(redrive.maxReceiveCount).toBeGreaterThanOrEqual(5);
    expect(redrive.deadLetterTargetArn).toEqual({
      'Fn::GetAtt': [logicalId(stack.harvester.messaging.pageDlq), 'Arn'],
    });
  });

  it('keeps dead-lettered pages for 14 days', () => {
    expect(dlq().MessageRetentionPeriod).toBe(1_209_600);
    expect(PAGE_DLQ_RETENTION_SECONDS).toBe(1_209_600);
  });

  it('hides a message for at least six worker timeouts', () => {
    const workerTimeout = functionProps(stack.harvester.pipeline.worker.fn).Timeout as number;
    expect(workerTimeout).toBe(WORKER_TIMEOUT_SECONDS);
    expect(queue().VisibilityTimeout as number).toBeGreaterThanOrEqual(6 * workerTimeout);
    expect(dlq().VisibilityTimeout as number).toBeGreaterThanOrEqual(
      functionProps(stack.harvester.pipeline.drain.fn).Timeout as number,
    );
  });

  it('encrypts every queue (page queue, page DLQ, start-run DLQ) and denies plain-HTTP access', () => {
    expect(queue().SqsManagedSseEnabled).toBe(true);
    expect(dlq().SqsManagedSseEnabled).toBe(true);
    expect(
      resourcesOf('AWS::SQS::Queue')[logicalId(stack.harvester.scheduling.startRunDlq)]!.Properties
        .SqsManagedSseEnabled,
    ).toBe(true);
    template.resourcePropertiesCountIs(
      'AWS::SQS::QueuePolicy',
      {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      },
      3,
    );
  });
});

describe('functions', () => {
  it('runs all six on nodejs22.x, arm64, traced by X-Ray, with their own log group', () => {
    const functions = Object.values(resourcesOf('AWS::Lambda::Function'));
    expect(functions).toHaveLength(6);
    for (const fn of functions) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
      });
      expect(fn.Properties.LoggingConfig).toMatchObject({ LogGroup: { Ref: expect.any(String) } });
      expect((fn.Properties.Environment as { Variables: object }).Variables).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'harvester',
      });
    }
  });

  it('lets the page worker re-enqueue itself without Lambda cutting the loop', () => {
    expect(functionProps(stack.harvester.pipeline.worker.fn)).toMatchObject({
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
    const env = (functionProps(stack.harvester.adminApi.handler.fn).Environment as { Variables: object })
      .Variables;
    expect(env).toMatchObject({
      SCHEDULER_ROLE_ARN: { 'Fn::GetAtt': [logicalId(stack.harvester.scheduling.schedulerRole), 'Arn'] },
      START_RUN_TARGET_ARN: { 'Fn::GetAtt': [logicalId(stack.harvester.scheduling.startRun.fn), 'Arn'] },
    });
  });
});

describe('event source mappings', () => {
  it('feeds the worker small batches with partial failures and a concurrency bound', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(stack.harvester.pipeline.worker.fn) },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack.harvester.messaging.pageQueue), 'Arn'] },
      BatchSize: Match.anyValue(),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 10 },
    });
    const worker = Object.values(resourcesOf('AWS::Lambda::EventSourceMapping')).find(
      (esm) =>
        (esm.Properties.FunctionName as { Ref: string }).Ref ===
        logicalId(stack.harvester.pipeline.worker.fn),
    );
    expect(worker?.Properties.BatchSize as number).toBeLessThanOrEqual(5);
  });

  it('drains the DLQ with partial batch failures', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(stack.harvester.pipeline.drain.fn) },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack.harvester.messaging.pageDlq), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });
});

describe('schedules', () => {
  it('ticks the reaper every minute, exactly on time', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 minute)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: { 'Fn::GetAtt': [logicalId(stack.harvester.scheduling.reaper.fn), 'Arn'] } },
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
                'aws:SourceArn': { 'Fn::GetAtt': [logicalId(stack.harvester.scheduling.group), 'Arn'] },
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
  const topicId = () => logicalId(stack.harvester.notifications.topic);

  it('routes failed runs and runs with errors from the Harvester bus to the topic', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      EventBusName: { Ref: logicalId(stack.harvester.messaging.bus) },
      EventPattern: {
        source: ['harvester'],
        'detail-type': ['SyncRun Failed', 'SyncRun Succeeded With Errors'],
      },
      Targets: [Match.objectLike({ Arn: { Ref: topicId() } })],
    });
  });

  it('encrypts the topic with a rotating key and denies plain-HTTP publishing', () => {
    template.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: { 'Fn::GetAtt': [logicalId(stack.harvester.notifications.key), 'Arn'] },
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
        {
          Name: 'QueueName',
          Value: { 'Fn::GetAtt': [logicalId(stack.harvester.messaging.pageDlq), 'QueueName'] },
        },
      ],
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
    });
  });

  it.each([
    ['reaper errors', 'AWS/Lambda', 'Errors', () => stack.harvester.scheduling.reaper.fn],
    ['worker errors', 'AWS/Lambda', 'Errors', () => stack.harvester.pipeline.worker.fn],
    ['worker throttles', 'AWS/Lambda', 'Throttles', () => stack.harvester.pipeline.worker.fn],
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

  it('watches the queue backlog through the reaper’s OldestWaitSeconds metric', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Harvester',
      MetricName: 'OldestWaitSeconds',
      Statistic: 'Maximum',
      Threshold: 600,
    });
  });

  it('sends every alarm to the notification topic', () => {
    expect(alarms().length).toBeGreaterThanOrEqual(5);
    for (const alarm of alarms()) {
      expect(alarm.AlarmActions).toEqual([{ Ref: logicalId(stack.harvester.notifications.topic) }]);
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
    const api = policyOf(stack.harvester.adminApi.handler.role);
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
        Resource: { 'Fn::GetAtt': [logicalId(stack.harvester.scheduling.schedulerRole), 'Arn'] },
        Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
  });

  it('lets the worker create deferral schedules, and nothing more in Scheduler', () => {
    const scheduler = policyOf(stack.harvester.pipeline.worker.role)
      .flatMap(actionsOf)
      .filter((a) => a.startsWith('scheduler:'));
    expect(scheduler.sort()).toEqual(['scheduler:CreateSchedule']);
    expect(policyOf(stack.harvester.pipeline.worker.role).flatMap(actionsOf)).toContain('iam:PassRole');
  });

  it('confines secret reads to the harvester/ prefix, and the cursor key to the API', () => {
    const cursorKey = JSON.stringify({
      Ref: stack.getLogicalId(stack.harvester.adminApi.cursorKey.node.defaultChild as CfnElement),
    });
    // (statement, resource) pairs: CDK merges statements with equal actions into one with several resources.
    const reads = (statementsOf: Statement[]) =>
      statementsOf
        .filter((s) =>
          actionsOf(s).some((a) => a === 'ssm:GetParameter' || a === 'secretsmanager:GetSecretValue'),
        )
        .flatMap((s) =>
          (Array.isArray(s.Resource) ? s.Resource : [s.Resource]).map((r) => JSON.stringify(r)),
        );
    const all = reads(statements());
    expect(all.filter((r) => r === cursorKey)).toHaveLength(1);
    expect(reads(policyOf(stack.harvester.adminApi.handler.role))).toContain(cursorKey);
    const secretReads = all.filter((r) => r !== cursorKey);
    expect(secretReads.length).toBeGreaterThan(0);
    for (const r of secretReads) expect(r).toMatch(/:(parameter\/|secret:)harvester\/\*/);
  });
});

describe('IAM least privilege: each role holds exactly the actions its code uses', () => {
  type Statement = { Action: string | string[]; Resource: unknown };
  const READ = [
    'dynamodb:BatchGetItem',
    'dynamodb:ConditionCheckItem',
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:Scan',
  ];
  const WRITE = [
    ...READ,
    'dynamodb:BatchWriteItem',
    'dynamodb:DeleteItem',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
  ];
  const SEND = ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'];
  const CONSUME = [...SEND, 'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:ReceiveMessage'];
  const LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents'];
  const XRAY = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'];
  const PASS = ['iam:PassRole'];

  /** A readable name for a policy resource: which construct (or pattern) it points at. */
  const label = (resource: unknown): string => {
    const text = JSON.stringify(resource);
    const named: [string, string][] = [
      ['syncRuns', logicalId(stack.harvester.tables.syncRuns)],
      ['sources', logicalId(stack.harvester.tables.sources)],
      ['deadLetters', logicalId(stack.harvester.tables.deadLetters)],
      ['items', logicalId(stack.harvester.tables.items)],
      ['rateBudgets', logicalId(stack.harvester.tables.rateBudgets)],
      ['pageQueue', logicalId(stack.harvester.messaging.pageQueue)],
      ['pageDlq', logicalId(stack.harvester.messaging.pageDlq)],
      ['startRunDlq', logicalId(stack.harvester.scheduling.startRunDlq)],
      ['bus', logicalId(stack.harvester.messaging.bus)],
      ['topic', logicalId(stack.harvester.notifications.topic)],
      ['key', logicalId(stack.harvester.notifications.key)],
      ['schedulerRole', logicalId(stack.harvester.scheduling.schedulerRole)],
      ['cursorKey', logicalId(stack.harvester.adminApi.cursorKey)],
      ['configMacKey', logicalId(stack.harvester.configMac.key)],
      ['startRunFunction', logicalId(stack.harvester.scheduling.startRun.fn)],
      ['reaperFunction', logicalId(stack.harvester.scheduling.reaper.fn)],
      ['sourceCheckFunction', logicalId(stack.harvester.adminApi.sourceCheck.fn)],
    ];
    const hit = named.find(([, id]) => text.includes(`"${id}"`));
    if (hit) return hit[0];
    if (/Logs[0-9A-F]{8}/.test(text)) return 'ownLogs';
    if (text.includes(':schedule/')) return 'harvesterSchedules';
    if (text.includes(':parameter/harvester/*')) return 'ssm:harvester/*';
    if (text.includes(':secret:harvester/*')) return 'secrets:harvester/*';
    if (text === '"*"') return '*';
    return text;
  };

  /** label → sorted actions, over every statement of every policy attached to the role. */
  const grantsOf = (role: { node: { defaultChild?: unknown } }): Record<string, string[]> => {
    const roleId = logicalId(role);
    const grants: Record<string, Set<string>> = {};
    for (const policy of Object.values(resourcesOf('AWS::IAM::Policy'))) {
      if (!(policy.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId)) continue;
      for (const st of (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement) {
        const resources = Array.isArray(st.Resource) ? st.Resource : [st.Resource];
        for (const resource of resources) {
          const key = label(resource);
          grants[key] ??= new Set();
          const set = grants[key];
          for (const action of Array.isArray(st.Action) ? st.Action : [st.Action]) set.add(action);
        }
      }
    }
    return Object.fromEntries(Object.entries(grants).map(([k, v]) => [k, [...v].sort()]));
  };
  const sorted = (actions: string[]) => [...new Set(actions)].sort();
  /** What a function other than the API may do on Sources: read a row, update the lock (see below). */
  const SOURCE_LOCK = ['dynamodb:GetItem', 'dynamodb:UpdateItem'];

  it('the API: runs, sources and dead letters, items read only; schedules; invoking the check function, no source secret', () => {
    expect(grantsOf(stack.harvester.adminApi.handler.role)).toEqual({
      ownLogs: LOGS,
      '*': sorted([...XRAY, 'scheduler:ListSchedules']),
      syncRuns: sorted(WRITE),
      sources: sorted(WRITE),
      deadLetters: sorted(WRITE),
      items: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'],
      sourceCheckFunction: ['lambda:InvokeFunction'],
      pageQueue: sorted(SEND),
      harvesterSchedules: sorted([
        'scheduler:CreateSchedule',
        'scheduler:DeleteSchedule',
        'scheduler:GetSchedule',
        'scheduler:UpdateSchedule',
      ]),
      schedulerRole: PASS,
      cursorKey: ['secretsmanager:GetSecretValue'],
      configMacKey: ['kms:GenerateMac', 'kms:VerifyMac'],
    });
  });

  it('the worker: every table, its queue, the bus, deferral schedules (create only) and source secrets', () => {
    expect(grantsOf(stack.harvester.pipeline.worker.role)).toEqual({
      ownLogs: LOGS,
      '*': XRAY,
      syncRuns: sorted(WRITE),
      sources: SOURCE_LOCK,
      deadLetters: sorted(WRITE),
      items: sorted(WRITE),
      rateBudgets: ['dynamodb:GetItem', 'dynamodb:PutItem'],
      pageQueue: sorted(CONSUME),
      bus: ['events:PutEvents'],
      harvesterSchedules: ['scheduler:CreateSchedule'],
      schedulerRole: PASS,
      'ssm:harvester/*': ['ssm:GetParameter'],
      'secrets:harvester/*': ['secretsmanager:GetSecretValue'],
      configMacKey: ['kms:VerifyMac'],
    });
  });

  it('the check function: a source row, source secrets, rate budgets and check slots, MAC verification', () => {
    expect(grantsOf(stack.harvester.adminApi.sourceCheck.role)).toEqual({
      ownLogs: LOGS,
      '*': XRAY,
      sources: ['dynamodb:GetItem'],
      rateBudgets: ['dynamodb:GetItem', 'dynamodb:PutItem'],
      'ssm:harvester/*': ['ssm:GetParameter'],
      'secrets:harvester/*': ['secretsmanager:GetSecretValue'],
      configMacKey: ['kms:VerifyMac'],
    });
  });

  it('the drain: runs, sources and dead letters, never items', () => {
    expect(grantsOf(stack.harvester.pipeline.drain.role)).toEqual({
      ownLogs: LOGS,
      '*': XRAY,
      syncRuns: sorted(WRITE),
      sources: SOURCE_LOCK,
      deadLetters: sorted(WRITE),
      pageQueue: sorted(SEND),
      pageDlq: sorted(CONSUME.filter((a) => a !== 'sqs:SendMessage')),
      bus: ['events:PutEvents'],
    });
  });

  it('the reaper and start-run', () => {
    expect(grantsOf(stack.harvester.scheduling.reaper.role)).toEqual({
      ownLogs: LOGS,
      '*': XRAY,
      syncRuns: sorted(WRITE),
      sources: SOURCE_LOCK,
      deadLetters: sorted(WRITE),
      pageQueue: sorted(SEND),
      bus: ['events:PutEvents'],
    });
    expect(grantsOf(stack.harvester.scheduling.startRun.role)).toEqual({
      ownLogs: LOGS,
      '*': XRAY,
      syncRuns: sorted(WRITE),
      sources: SOURCE_LOCK,
      pageQueue: sorted(SEND),
      startRunDlq: sorted(SEND),
    });
  });

  type Conditioned = { Action: string | string[]; Resource: unknown; Condition?: Record<string, unknown> };
  /** Every statement of the role's policies that touches the Sources table. */
  const sourceStatements = (role: { node: { defaultChild?: unknown } }): Conditioned[] => {
    const roleId = logicalId(role);
    return Object.values(resourcesOf('AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
      .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Conditioned[] }).Statement)
      .filter((st) => JSON.stringify(st.Resource).includes(`"${logicalId(stack.harvester.tables.sources)}"`));
  };
  const actionsOf = (st: Conditioned) => (Array.isArray(st.Action) ? st.Action : [st.Action]);
  const WRITES = [
    'dynamodb:PutItem',
    'dynamodb:DeleteItem',
    'dynamodb:BatchWriteItem',
    'dynamodb:UpdateItem',
  ];

  it.each([
    ['start-run', () => stack.harvester.scheduling.startRun.role, ['sourceId', 'activeRunId', 'lockedAt']],
    [
      'reaper',
      () => stack.harvester.scheduling.reaper.role,
      ['sourceId', 'activeRunId', 'lockedAt', 'watermark', 'watermarkStream'],
    ],
    [
      'drain',
      () => stack.harvester.pipeline.drain.role,
      ['sourceId', 'activeRunId', 'lockedAt', 'watermark', 'watermarkStream'],
    ],
    [
      'worker',
      () => stack.harvester.pipeline.worker.role,
      ['sourceId', 'activeRunId', 'lockedAt', 'watermark', 'watermarkStream'],
    ],
  ] as const)(
    'the %s may update only the lock (and watermark) attributes of a source row, never a binding',
    (_name, role, attributes) => {
      const writes = sourceStatements(role()).filter((st) => actionsOf(st).some((a) => WRITES.includes(a)));
      expect(writes).toHaveLength(1);
      expect(actionsOf(writes[0]!)).toEqual(['dynamodb:UpdateItem']);
      expect(writes[0]!.Condition).toEqual({
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': attributes },
        'ForAllValues:StringNotLike': { 'dynamodb:LeadingKeys': ['binding#*'] },
      });
      const actions = sourceStatements(role()).flatMap(actionsOf);
      for (const never of [
        'dynamodb:PutItem',
        'dynamodb:DeleteItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:Scan',
      ])
        expect(actions).not.toContain(never);
    },
  );

  it('no function role but the API may write the Sources table unconditioned', () => {
    const apiRoleId = logicalId(stack.harvester.adminApi.handler.role);
    const sourcesId = logicalId(stack.harvester.tables.sources);
    for (const policy of Object.values(resourcesOf('AWS::IAM::Policy'))) {
      const roles = policy.Properties.Roles as { Ref: string }[];
      if (roles.every((r) => r.Ref === apiRoleId)) continue;
      for (const st of (policy.Properties.PolicyDocument as { Statement: Conditioned[] }).Statement) {
        if (!JSON.stringify(st.Resource).includes(`"${sourcesId}"`)) continue;
        if (actionsOf(st).some((a) => WRITES.includes(a))) expect(st.Condition).toBeDefined();
      }
    }
    expect(sourceStatements(stack.harvester.adminApi.handler.role).flatMap(actionsOf)).toEqual(
      expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']),
    );
  });

  it('the run functions and the API read no table stream', () => {
    const roles = [
      stack.harvester.adminApi.handler.role,
      stack.harvester.adminApi.sourceCheck.role,
      stack.harvester.pipeline.worker.role,
      stack.harvester.pipeline.drain.role,
      stack.harvester.scheduling.reaper.role,
      stack.harvester.scheduling.startRun.role,
    ];
    for (const role of roles) {
      const actions = Object.values(grantsOf(role)).flat();
      expect(actions).not.toContain('dynamodb:GetRecords');
      expect(actions).not.toContain('dynamodb:GetShardIterator');
    }
  });

  it('the Scheduler role and the run-outcome publisher', () => {
    expect(grantsOf(stack.harvester.scheduling.schedulerRole)).toEqual({
      pageQueue: sorted(SEND),
      startRunDlq: sorted(SEND),
      startRunFunction: ['lambda:InvokeFunction'],
    });
    expect(grantsOf(stack.harvester.notifications.publishRole)).toEqual({
      topic: ['sns:Publish'],
      key: ['kms:Decrypt', 'kms:GenerateDataKey*'],
    });
  });
});

describe('confused-deputy conditions on the notification topic and its key', () => {
  const alarmCondition = {
    StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
    ArnLike: { 'aws:SourceArn': expect.anything() },
  };
  type PolicyStatement = {
    Effect: string;
    Principal?: { Service?: unknown };
    Condition?: Record<string, unknown>;
  };
  const allows = (doc: unknown) =>
    (doc as { Statement: PolicyStatement[] }).Statement.filter(
      (st) => st.Effect === 'Allow' && st.Principal?.Service,
    );

  it('admits service principals to the topic only with aws:SourceAccount and aws:SourceArn', () => {
    const policy = Object.values(resourcesOf('AWS::SNS::TopicPolicy'))[0]!.Properties.PolicyDocument;
    const services = allows(policy);
    expect(services.map((st) => st.Principal?.Service)).toEqual(['cloudwatch.amazonaws.com']);
    for (const st of services) expect(st.Condition).toMatchObject(alarmCondition);
  });

  it('admits service principals to the key only with the same conditions', () => {
    const key = resourcesOf('AWS::KMS::Key')[logicalId(stack.harvester.notifications.key)]!;
    const services = allows(key.Properties.KeyPolicy);
    expect(services.length).toBeGreaterThan(0);
    for (const st of services) expect(st.Condition).toMatchObject(alarmCondition);
  });

  it('lets only rules on the Harvester bus of this account publish run outcomes', () => {
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          Match.objectLike({
            Principal: { Service: 'events.amazonaws.com' },
            Condition: {
              StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
              ArnLike: { 'aws:SourceArn': Match.anyValue() },
            },
          }),
        ],
      },
    });
    template.hasResourceProperties('AWS::Events::Rule', {
      Targets: [
        Match.objectLike({
          Arn: { Ref: logicalId(stack.harvester.notifications.topic) },
          RoleArn: { 'Fn::GetAtt': [logicalId(stack.harvester.notifications.publishRole), 'Arn'] },
        }),
      ],
    });
  });
});

describe('redeployable: cdk destroy then cdk deploy of the same stack name', () => {
  /** Properties that fix a resource's physical name (CloudFormation would otherwise generate one). */
  const NAME_PROPERTIES = [
    'Name',
    'TableName',
    'QueueName',
    'TopicName',
    'LogGroupName',
    'FunctionName',
    'RoleName',
    'EventBusName',
    'AliasName',
    'DashboardName',
    'AlarmName',
  ];

  it('retains no resource whose physical name is fixed (it would collide with the next deploy)', () => {
    const resources = template.toJSON().Resources as Record<string, Resource>;
    const retained = Object.entries(resources).filter(([, r]) => r.DeletionPolicy === 'Retain');
    expect(retained.length).toBeGreaterThan(0); // two-sided: the tables are retained
    const collisions = retained.flatMap(([id, r]) =>
      NAME_PROPERTIES.filter((name) => r.Properties?.[name] !== undefined).map((name) => `${id}.${name}`),
    );
    expect(collisions).toEqual([]);
  });

  it('deletes the Scheduler group with the stack: its schedules target this stack only', () => {
    const group = resourcesOf('AWS::Scheduler::ScheduleGroup')[logicalId(stack.harvester.scheduling.group)]!;
    expect(group.DeletionPolicy).toBe('Delete');
  });
});

describe('failures that always surface', () => {
  it('sends scheduled starts that failed after their retries to the start-run DLQ', () => {
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: logicalId(stack.harvester.scheduling.startRun.fn) },
      DestinationConfig: {
        OnFailure: {
          Destination: { 'Fn::GetAtt': [logicalId(stack.harvester.scheduling.startRunDlq), 'Arn'] },
        },
      },
    });
  });

  it('names the start-run DLQ as the dead-letter target of source schedules', () => {
    const env = (functionProps(stack.harvester.adminApi.handler.fn).Environment as { Variables: object })
      .Variables;
    expect(env).toMatchObject({
      START_RUN_DLQ_ARN: { 'Fn::GetAtt': [logicalId(stack.harvester.scheduling.startRunDlq), 'Arn'] },
    });
  });

  it('alarms when the start-run DLQ holds a message', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: { 'Fn::GetAtt': [logicalId(stack.harvester.scheduling.startRunDlq), 'QueueName'] },
        },
      ],
      Threshold: 0,
      AlarmActions: [{ Ref: logicalId(stack.harvester.notifications.topic) }],
    });
  });

  it('alarms on admin API 5xx', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/ApiGateway',
      MetricName: '5xx',
      Dimensions: [{ Name: 'ApiId', Value: { Ref: logicalId(stack.harvester.adminApi.api) } }],
      AlarmActions: [{ Ref: logicalId(stack.harvester.notifications.topic) }],
    });
  });

  it('references the source maps from every bundle, and Node reads them', () => {
    const outdir = app.synth().directory;
    const bundles = readdirSync(outdir)
      .filter((name) => name.startsWith('asset.'))
      .map((name) => join(outdir, name, 'index.mjs'));
    expect(bundles).toHaveLength(6);
    for (const bundle of bundles) {
      expect(readFileSync(bundle, 'utf8').trimEnd().endsWith('//# sourceMappingURL=index.mjs.map')).toBe(
        true,
      );
    }
    for (const fn of Object.values(resourcesOf('AWS::Lambda::Function'))) {
      const vars = (fn.Properties.Environment as { Variables: Record<string, string> }).Variables;
      expect(vars.NODE_OPTIONS).toContain('--enable-source-maps');
    }
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
    'DashboardUrl',
  ])('exports %s', (name) => {
    template.hasOutput(name, {});
  });

  it.each(['README.md', 'docs/deploy.md', 'docs/operations.md'])('exports every output %s names', (file) => {
    const text = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
    const named = [...text.matchAll(/`([A-Z][A-Za-z]+(?:Url|Arn|Name))`/g)].map((m) => m[1] as string);
    expect(named.length).toBeGreaterThan(0);
    for (const name of new Set(named)) expect(Object.keys(template.findOutputs(name))).toEqual([name]);
  });

  it('exports every output the API description names', () => {
    const named = DEFAULT_SERVERS.flatMap((server) =>
      [...(server.description ?? '').matchAll(/`(\w+)` stack output/g)].map((m) => m[1] as string),
    );
    expect(named.length).toBeGreaterThan(0);
    for (const name of named) template.hasOutput(name, {});
  });
});
