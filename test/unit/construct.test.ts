import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildExample } from '../../examples/existing-stack/app.js';
import { HARVESTER_OUTPUTS, Harvester } from '../../infra/harvester.js';
import { DEFAULT_SETTINGS } from '../../infra/settings.js';

// The example app of examples/: Harvester added as a construct to a stack of one's own.
let template: Template;

beforeAll(() => {
  const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'harvester-example-')) });
  template = Template.fromStack(buildExample(app));
}, 180_000);

describe('the Harvester construct in an existing stack', () => {
  it('brings its tables, functions and queues into that stack', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 5);
    expect(Object.keys(template.findResources('AWS::Lambda::Function')).length).toBeGreaterThanOrEqual(5);
    template.hasResourceProperties('AWS::SQS::Queue', {});
  });

  it('takes its settings as props', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      ScalingConfig: { MaximumConcurrency: 5 },
    });
  });

  it('adds no output to the host stack unless asked', () => {
    expect(template.findOutputs('*')).toEqual({});
  });

  it('lets the stack wire its parts: the example grants a role of its own read access to the items', () => {
    const policies = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('AnalyticsReader');
  });
});

// Bundling skipped (`aws:cdk:bundling-stacks: []`): only the template matters.
const bare = (context: Record<string, unknown> = {}) =>
  new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } }), 'Host');

describe('the Harvester construct’s props', () => {
  it('reads no CDK context: a setting given only as context keeps its default', () => {
    const stack = bare({ 'harvester:workerMaxConcurrency': 3, 'harvester:changeFeed': true });
    const harvester = new Harvester(stack, 'Harvester');
    expect(harvester.settings).toEqual(DEFAULT_SETTINGS);
    Template.fromStack(stack).hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      ScalingConfig: { MaximumConcurrency: DEFAULT_SETTINGS.workerMaxConcurrency },
    });
  });

  it('adds every output under `<construct id><output>` with `outputs: true`', () => {
    const stack = bare();
    new Harvester(stack, 'Sync', { outputs: true });
    const ids = Object.keys(Template.fromStack(stack).findOutputs('*'));
    expect(ids.sort()).toEqual(
      Object.keys(HARVESTER_OUTPUTS)
        .map((id) => `Sync${id}`)
        .sort(),
    );
  });

  it('takes another prefix for the output ids', () => {
    const stack = bare();
    new Harvester(stack, 'Sync', { outputs: true, outputIdPrefix: 'Ingest' });
    Template.fromStack(stack).hasOutput('IngestApiUrl', {});
  });
});
