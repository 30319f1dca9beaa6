import { readFileSync } from 'node:fs';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { addHarvester } from '../../infra/harvester-app.js';
import { API_RESERVED_CONCURRENCY, SOURCE_TEST_ROUTE_THROTTLE } from '../../infra/settings.js';

/**
 * The template's limits on the admin API and its signing key: the API function's reserved
 * concurrency, the connection check's own route throttle, and a key policy under which only the
 * API role can make a config MAC, whatever IAM policies the account hands out.
 */

// Bundling skipped (`aws:cdk:bundling-stacks: []`): only the template matters here.
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};
const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
const stack = addHarvester(app);
const template = Template.fromStack(stack);
const idOf = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);
type Resource = { Properties: Record<string, unknown>; DependsOn?: string[] };
const resource = (type: string, id: string) => template.findResources(type)[id] as Resource;

describe('the admin API cannot exhaust the account', () => {
  it('reserves (and caps) the API function at its concurrency setting', () => {
    const fn = resource('AWS::Lambda::Function', idOf(stack.harvester.adminApi.handler.fn));
    expect(fn.Properties.ReservedConcurrentExecutions).toBe(API_RESERVED_CONCURRENCY);
    expect(API_RESERVED_CONCURRENCY).toBeGreaterThan(0);
  });

  it('throttles POST /sources/{sourceId}/test on its own IAM-authorized route, below the stage', () => {
    const routes = Object.entries(template.findResources('AWS::ApiGatewayV2::Route'));
    const [routeId, route] =
      routes.find(([, r]) => r.Properties.RouteKey === 'POST /sources/{sourceId}/test') ?? [];
    const stage = resource('AWS::ApiGatewayV2::Stage', idOf(stack.harvester.adminApi.stage));
    const settings = stage.Properties as {
      DefaultRouteSettings: { ThrottlingRateLimit: number };
      RouteSettings: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }>;
    };

    expect(route?.Properties.AuthorizationType).toBe('AWS_IAM');
    expect(settings.RouteSettings['POST /sources/{sourceId}/test']).toEqual({
      ThrottlingRateLimit: SOURCE_TEST_ROUTE_THROTTLE.rateLimit,
      ThrottlingBurstLimit: SOURCE_TEST_ROUTE_THROTTLE.burstLimit,
    });
    expect(SOURCE_TEST_ROUTE_THROTTLE.rateLimit).toBeLessThan(
      settings.DefaultRouteSettings.ThrottlingRateLimit,
    );
    // The stage names the route's key, so CloudFormation must create the route first.
    expect(stage.DependsOn).toContain(routeId);
  });
});

type Statement = {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  Principal: unknown;
  Action: string | string[];
  Condition?: Record<string, Record<string, unknown>>;
};
const list = (value: string | string[]) => (Array.isArray(value) ? value : [value]);
const matches = (pattern: string, action: string) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test(action);

describe('the config MAC key policy', () => {
  const key = resource('AWS::KMS::Key', idOf(stack.harvester.configMac.key));
  const statements = (key.Properties.KeyPolicy as { Statement: Statement[] }).Statement;
  const apiRole = { 'Fn::GetAtt': [idOf(stack.harvester.adminApi.handler.role), 'Arn'] };
  const root = (s: Statement) => JSON.stringify(s.Principal).includes(':root');

  it('lets the account administer the key and delegate verification, but not sign or grant', () => {
    const account = statements.filter((s) => s.Effect === 'Allow' && root(s));
    const actions = account.flatMap((s) => list(s.Action));

    expect(account).toHaveLength(1);
    expect(actions).toEqual(expect.arrayContaining(['kms:VerifyMac', 'kms:Put*', 'kms:ScheduleKeyDeletion']));
    for (const action of ['kms:GenerateMac', 'kms:CreateGrant', 'kms:Decrypt'])
      expect(
        actions.some((pattern) => matches(pattern, action)),
        action,
      ).toBe(false);
    expect(actions.some((pattern) => matches(pattern, 'kms:PutKeyPolicy'))).toBe(true);
  });

  it('names the API role as the one principal allowed kms:GenerateMac, and denies it to every other', () => {
    const allows = statements.filter(
      (s) => s.Effect === 'Allow' && list(s.Action).some((a) => matches(a, 'kms:GenerateMac')),
    );
    const denies = statements.filter(
      (s) => s.Effect === 'Deny' && list(s.Action).includes('kms:GenerateMac'),
    );

    expect(allows.map((s) => s.Principal)).toEqual([{ AWS: apiRole }]);
    expect(denies).toHaveLength(1);
    expect(denies[0]?.Principal).toEqual({ AWS: '*' });
    expect(denies[0]?.Condition).toEqual({ ArnNotEquals: { 'aws:PrincipalArn': apiRole } });
  });
});
