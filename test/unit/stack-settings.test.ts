import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { DataTables } from '../../infra/constructs/data-tables.js';
import {
  DEFAULT_SETTINGS,
  FUNCTION_TIMEOUT_SECONDS,
  type HarvesterSettings,
  resolveSettings,
} from '../../infra/settings.js';
import { HarvesterStack } from '../../infra/stack.js';
import { SOURCE_TEST_BUDGET_WAIT_MS, SOURCE_TEST_TIMEOUT_MS } from '../../lib/api/source-test.js';

// Pure settings resolution and the tables alone: no function bundling, so these stay fast.

describe('resolveSettings', () => {
  it('protects data by default', () => {
    expect(resolveSettings(new App())).toEqual(DEFAULT_SETTINGS);
    expect(DEFAULT_SETTINGS.deletionProtection).toBe(true);
  });

  it('reads command-line context, which arrives as strings', () => {
    const app = new App({
      context: {
        'harvester:deletionProtection': 'false',
        'harvester:workerMaxConcurrency': '25',
        'harvester:logLevel': 'DEBUG',
        'harvester:tracing': 'false',
        'harvester:maxPartitionsPerRun': '16',
        'harvester:minEntitiesPerPartition': '1000',
      },
    });
    expect(resolveSettings(app)).toMatchObject({
      deletionProtection: false,
      workerMaxConcurrency: 25,
      logLevel: 'DEBUG',
      tracing: false,
      maxPartitionsPerRun: 16,
      minEntitiesPerPartition: 1000,
      // Unless set, a source's share is half the workers, so one source never holds them all.
      maxWorkersPerSource: 12,
    });
  });

  it('reads list settings as arrays or comma-separated strings', () => {
    const app = new App({
      context: {
        'harvester:allowedSourceHosts': 'api.github.com, *.example.com',
        'harvester:sharedSecretRefs': '{"ssm:/org/github-token":["https://api.github.com"]}',
        'harvester:allowPrivateSources': 'true',
      },
    });
    expect(resolveSettings(app)).toMatchObject({
      allowedSourceHosts: ['api.github.com', '*.example.com'],
      sharedSecretRefs: { 'ssm:/org/github-token': ['https://api.github.com'] },
      allowPrivateSources: true,
    });
    expect(DEFAULT_SETTINGS).toMatchObject({
      allowedSourceHosts: [],
      sharedSecretRefs: {},
      allowPrivateSources: false,
    });
  });

  it.each([
    [['ssm:/org/github-token'], 'without origins'],
    [{ 'ssm:/org/github-token': [] }, 'needs an explicit, non-empty origin list'],
    [{ 'ssm:/org/*': ['https://api.github.com'] }, 'no wildcards'],
    [{ 'secretsmanager:arn:aws:secretsmanager:us-east-1:1:secret:x': ['https://a.example'] }, 'not an ARN'],
    [{ 'ssm:/org/t': ['https://*.github.com'] }, 'no wildcards'],
    [{ 'ssm:/org/t': ['http://api.github.com'] }, 'must be https://'],
    [{ 'ssm:/org/t': ['https://api.github.com/v3'] }, 'origin only'],
  ])('refuses shared secrets %j at synth (%s)', (value, message) => {
    const app = new App({ context: { 'harvester:sharedSecretRefs': value } });
    expect(() => resolveSettings(app)).toThrow(message);
  });

  it('lets a stack prop win over context', () => {
    const app = new App({ context: { 'harvester:deletionProtection': false } });
    expect(resolveSettings(app, { deletionProtection: true }).deletionProtection).toBe(true);
  });

  it.each([
    ['harvester:deletionProtection', 'maybe'],
    ['harvester:workerMaxConcurrency', '1'],
    ['harvester:workerMaxConcurrency', '2.5'],
    ['harvester:logLevel', 'TRACE'],
    ['harvester:maxPartitionsPerRun', '65'],
    ['harvester:maxPartitionsPerRun', '0'],
    ['harvester:allowedSourceHosts', 42],
    ['harvester:maxWorkersPerSource', '10'], // every worker of the default 10
    ['harvester:maxWorkersPerSource', '0'],
  ])('rejects %s=%s', (key, value) => {
    expect(() => resolveSettings(new App({ context: { [key]: value } }))).toThrow(key);
  });
});

describe('DataTables without deletion protection', () => {
  it('lets the stack delete the tables (for throwaway environments)', () => {
    // Built-in CloudFormation validation (seconds of wasm) is left to stack.test.ts, which synthesizes it all.
    const stack = new Stack(new App({ builtinCloudFormationValidation: false }), 'Dev');
    new DataTables(stack, 'Tables', { deletionProtection: false });
    const tables = Object.values(Template.fromStack(stack).findResources('AWS::DynamoDB::Table'));
    expect(tables).toHaveLength(5);
    for (const table of tables) {
      expect(table.DeletionPolicy).toBe('Delete');
      expect(table.Properties.DeletionProtectionEnabled).toBe(false);
      expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    }
  });
});

describe('source policy settings in the stack', () => {
  // Bundling skipped (`aws:cdk:bundling-stacks: []`): only the template matters here, so this stays fast.
  const synth = (props: Partial<HarvesterSettings>) => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new HarvesterStack(app, 'Policy', props);
    return { stack, template: Template.fromStack(stack) };
  };

  it('grants the worker exactly the shared secrets outside harvester/, besides harvester/*', () => {
    const { stack, template } = synth({
      sharedSecretRefs: {
        'ssm:/org/github-token': ['https://api.github.com'],
        'secretsmanager:org/api-key': ['https://api.example.com'],
        'ssm:/harvester/shared/x': ['https://x.example.com'],
      },
    });
    const roleId = stack.getLogicalId(stack.harvester.pipeline.worker.role.node.defaultChild as CfnElement);
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string; Resource: unknown }[]);
    const resourcesOf = (action: string) =>
      JSON.stringify(statements.filter((s) => s.Action === action).map((s) => s.Resource));
    expect(resourcesOf('ssm:GetParameter')).toContain(':parameter/harvester/*');
    expect(resourcesOf('ssm:GetParameter')).toContain(':parameter/org/github-token');
    expect(resourcesOf('secretsmanager:GetSecretValue')).toContain(':secret:org/api-key-??????');
    expect(resourcesOf('ssm:GetParameter')).not.toContain('shared/x');
  });

  it('tells every function the posture: never loopback on AWS, hosts and shared secrets as set', () => {
    const { template } = synth({
      allowedSourceHosts: ['api.github.com'],
      sharedSecretRefs: { 'ssm:/org/t': ['https://api.github.com'] },
    });
    const functions = Object.values(template.findResources('AWS::Lambda::Function'));
    expect(functions).toHaveLength(6);
    expect(DEFAULT_SETTINGS.maxWorkersPerSource).toBeLessThan(DEFAULT_SETTINGS.workerMaxConcurrency);
    for (const fn of functions) {
      expect(fn.Properties.Environment.Variables).toMatchObject({
        SOURCE_ALLOW_LOOPBACK: 'false',
        SOURCE_ALLOW_PRIVATE: 'false',
        SOURCE_ALLOWED_HOSTS: 'api.github.com',
        SHARED_SECRET_REFS: '{"ssm:/org/t":["https://api.github.com"]}',
        MAX_WORKERS_PER_SOURCE: String(DEFAULT_SETTINGS.maxWorkersPerSource),
      });
    }
  });
});

describe('the connection check fits the API function', () => {
  it('gives up on the source well before the API function (and API Gateway) time out', () => {
    // Time to answer after the source gave up: a KMS verify, a binding read, the response.
    // The budget wait is slept inside the check's timeout, but a sleep begun just before it ends runs out.
    expect(SOURCE_TEST_TIMEOUT_MS + SOURCE_TEST_BUDGET_WAIT_MS + 5_000).toBeLessThan(
      FUNCTION_TIMEOUT_SECONDS.api * 1_000,
    );
  });
});
