import { readFileSync } from 'node:fs';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { addHarvester } from '../../infra/harvester-app.js';
import type { HarvesterStack } from '../../infra/stack.js';

// Bundling skipped (`aws:cdk:bundling-stacks: []`): only the template matters here, so this stays fast.
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};

function synth(context: Record<string, unknown>) {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = addHarvester(app);
  return { app, stack, template: Template.fromStack(stack) };
}

const idOf = (stack: HarvesterStack, construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

describe('the change feed setting', () => {
  const on = synth({ 'harvester:changeFeed': 'true' });
  const items = () =>
    on.template.findResources('AWS::DynamoDB::Table')[idOf(on.stack, on.stack.harvester.tables.items)]!;

  it('puts a new-image stream on the Items table and two pipes to the bus, one a detail type', () => {
    const pipes = Object.values(on.template.findResources('AWS::Pipes::Pipe'));
    const streamArn = { 'Fn::GetAtt': [idOf(on.stack, on.stack.harvester.tables.items), 'StreamArn'] };

    expect(items().Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
    expect(pipes).toHaveLength(2);
    expect(
      pipes
        .map((p) => p.Properties.TargetParameters.EventBridgeEventBusParameters)
        .sort((a, b) => (a.DetailType < b.DetailType ? -1 : 1)),
    ).toEqual([
      { DetailType: 'Entity Changed', Source: 'harvester' },
      { DetailType: 'Entity Tombstoned', Source: 'harvester' },
    ]);
    for (const pipe of pipes) {
      expect(pipe.Properties.Source).toEqual(streamArn);
      expect(pipe.Properties.Target).toEqual({
        'Fn::GetAtt': [idOf(on.stack, on.stack.harvester.messaging.bus), 'Arn'],
      });
      const pattern = JSON.parse(pipe.Properties.SourceParameters.FilterCriteria.Filters[0].Pattern);
      expect(pattern.dynamodb.NewImage.lastWrite.S).toHaveLength(1);
    }
  });

  it('gives each pipe a role that reads only this stream, invokes only the enrichment, puts only on this bus and dead-letters only to its queue', () => {
    const fnArn = { 'Fn::GetAtt': [idOf(on.stack, on.stack.harvester.changeFeed!.enrichment.fn), 'Arn'] };
    for (const role of on.stack.harvester.changeFeed!.roles) {
      const roleId = idOf(on.stack, role);
      const statements = Object.values(on.template.findResources('AWS::IAM::Policy'))
        .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleId))
        .flatMap(
          (p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[],
        );
      expect(statements.map((s) => [s.Action, s.Resource])).toEqual([
        [
          ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
          { 'Fn::GetAtt': [idOf(on.stack, on.stack.harvester.tables.items), 'StreamArn'] },
        ],
        ['dynamodb:ListStreams', '*'],
        ['lambda:InvokeFunction', fnArn],
        ['events:PutEvents', { 'Fn::GetAtt': [idOf(on.stack, on.stack.harvester.messaging.bus), 'Arn'] }],
        ['sqs:SendMessage', { 'Fn::GetAtt': [expect.stringContaining('PipeDlq'), 'Arn'] }],
      ]);
    }
    // The enrichment reads and writes nothing: its role has logs and tracing only.
    const enrichmentRole = idOf(on.stack, on.stack.harvester.changeFeed!.enrichment.role);
    const actions = Object.values(on.template.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles).includes(enrichmentRole))
      .flatMap((p) =>
        (p.Properties.PolicyDocument.Statement as { Action: string | string[] }[]).flatMap((s) => s.Action),
      );
    expect(actions.filter((a) => !/^(logs|xray):/.test(a))).toEqual([]);
  });

  it('gives each pipe a dead-letter queue of its own, with an alarm on its depth that notifies the topic', () => {
    const feed = on.stack.harvester.changeFeed!;
    const pipes = on.template.findResources('AWS::Pipes::Pipe');
    const alarms = Object.values(on.template.findResources('AWS::CloudWatch::Alarm'));
    const topic = idOf(on.stack, on.stack.harvester.notifications.topic);
    const dlqIds = feed.pipes.map(
      (pipe) =>
        pipes[on.stack.getLogicalId(pipe)]!.Properties.SourceParameters.DynamoDBStreamParameters
          .DeadLetterConfig.Arn['Fn::GetAtt'][0] as string,
    );

    expect(dlqIds).toHaveLength(2);
    expect(new Set(dlqIds).size).toBe(2);
    expect(dlqIds.sort()).toEqual(
      Object.values(feed.deadLetterQueues)
        .map((q) => idOf(on.stack, q))
        .sort(),
    );
    for (const dlq of dlqIds) {
      const onDepth = alarms.filter(
        (a) =>
          a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible' &&
          JSON.stringify(a.Properties.Dimensions).includes(dlq),
      );
      expect(onDepth).toHaveLength(1);
      expect(onDepth[0]!.Properties).toMatchObject({
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
      });
      expect(JSON.stringify(onDepth[0]!.Properties.AlarmActions)).toContain(topic);
    }
  });

  it("lets only its own pipe, in this account, assume each pipe's role", () => {
    const pipes = on.template.findResources('AWS::Pipes::Pipe');
    const roles = on.template.findResources('AWS::IAM::Role');
    for (const [i, pipe] of on.stack.harvester.changeFeed!.pipes.entries()) {
      const { Name, RoleArn } = pipes[on.stack.getLogicalId(pipe)]!.Properties;
      const trust = roles[RoleArn['Fn::GetAtt'][0]]!.Properties.AssumeRolePolicyDocument.Statement;
      const condition = JSON.stringify(trust[0].Condition);

      expect(trust).toHaveLength(1);
      expect(trust[0].Principal).toEqual({ Service: 'pipes.amazonaws.com' });
      expect(trust[0].Condition.StringEquals['aws:SourceAccount']).toEqual({ Ref: 'AWS::AccountId' });
      expect(condition).toContain(`:pipe/${Name}`);
      // The other pipe's name is not accepted.
      const other = on.stack.harvester.changeFeed!.pipes[1 - i]!;
      expect(condition).not.toContain(`:pipe/${pipes[on.stack.getLogicalId(other)]!.Properties.Name}"`);
    }
  });

  it('leaves no unacknowledged cdk-nag finding', () => {
    const findings = new AwsSolutionsChecks()
      .validateScope(on.app)
      .violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} @ ${r.constructPath}`));
    expect(findings).toEqual([]);
  });

  it('is off by default: no stream, no pipe; point-in-time recovery on the Items table unless turned off', () => {
    const off = synth({});
    const noPitr = synth({ 'harvester:itemsPointInTimeRecovery': 'false' });
    const itemsOf = (s: ReturnType<typeof synth>) =>
      s.template.findResources('AWS::DynamoDB::Table')[idOf(s.stack, s.stack.harvester.tables.items)]!
        .Properties;

    expect(off.template.findResources('AWS::Pipes::Pipe')).toEqual({});
    expect(itemsOf(off).StreamSpecification).toBeUndefined();
    expect(itemsOf(off).PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(itemsOf(noPitr).PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: false });
  });
});
