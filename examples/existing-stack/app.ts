/**
 * Harvester added to a stack you already have, imported from this checkout's sources. In your own
 * app, import from the package (`import { Harvester } from 'harvester';`), as examples/app does.
 * Synthesize this one with `npx cdk synth --app "npx tsx examples/existing-stack/app.ts"`.
 */
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Harvester } from '../../infra/index.js';

/** Builds the example: a platform stack with a role of its own, and Harvester beside it. */
export function buildExample(app: App): Stack {
  const platform = new Stack(app, 'MyPlatform', { description: 'An existing stack with Harvester added' });
  const harvester = new Harvester(platform, 'Harvester', {
    workerMaxConcurrency: 5,
    allowedSourceHosts: ['api.github.com'],
    sharedSecretRefs: { 'ssm:/platform/github-token': ['https://api.github.com'] },
  });
  // The construct's parts are there to wire into the rest of the stack: here, a reader of the items.
  const reader = new iam.Role(platform, 'AnalyticsReader', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
  });
  harvester.tables.items.grantReadData(reader);
  return platform;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const app = new App();
  buildExample(app);
  app.synth();
}
