import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { DataTables } from '../../infra/constructs/data-tables.js';
import { DEFAULT_SETTINGS, resolveSettings } from '../../infra/settings.js';

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
      },
    });
    expect(resolveSettings(app)).toMatchObject({
      deletionProtection: false,
      workerMaxConcurrency: 25,
      logLevel: 'DEBUG',
      tracing: false,
    });
  });

  it('reads list settings as arrays or comma-separated strings', () => {
    const app = new App({
      context: {
        'harvester:allowedSourceHosts': 'api.github.com, *.example.com',
        'harvester:sharedSecretRefs': ['ssm:/org/github-token'],
        'harvester:allowPrivateSources': 'true',
      },
    });
    expect(resolveSettings(app)).toMatchObject({
      allowedSourceHosts: ['api.github.com', '*.example.com'],
      sharedSecretRefs: ['ssm:/org/github-token'],
      allowPrivateSources: true,
    });
    expect(DEFAULT_SETTINGS).toMatchObject({
      allowedSourceHosts: [],
      sharedSecretRefs: [],
      allowPrivateSources: false,
    });
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
    ['harvester:allowedSourceHosts', 42],
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
    expect(tables).toHaveLength(4);
    for (const table of tables) {
      expect(table.DeletionPolicy).toBe('Delete');
      expect(table.Properties.DeletionProtectionEnabled).toBe(false);
      expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    }
  });
});
