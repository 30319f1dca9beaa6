/**
 * A CDK app of your own with Harvester in it, compiled with plain `tsc` and run with `node`: the
 * package is imported by name, as from npm. test/unit/package.test.ts packs the repository,
 * installs the tarball beside this app, compiles and synthesizes it.
 */
import { App, CfnOutput, Stack } from 'aws-cdk-lib';
import { Harvester } from 'harvester';
import { addHarvesterChecks } from 'harvester/nag';

const app = new App();
const platform = new Stack(app, 'ExamplePlatform', { description: 'An app of its own with Harvester in it' });
const harvester = new Harvester(platform, 'Harvester', {
  deletionProtection: false,
  workerMaxConcurrency: 4,
  // The stack outputs, under stable ids: HarvesterApiUrl, HarvesterDashboardUrl…
  outputs: true,
});
// The construct's parts are public: export one more value from the app's own code.
new CfnOutput(platform, 'ItemsTableArn', { value: harvester.tables.items.tableArn });
// Opt-in: cdk-nag's AwsSolutions checks over the whole app.
addHarvesterChecks(app);
app.synth();
