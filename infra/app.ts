import { App } from 'aws-cdk-lib';
import { addHarvester } from './harvester-app.js';

/**
 * CDK entry point (`cdk.json` runs it with tsx). The stack is environment-agnostic on purpose: nothing
 * in it looks anything up, so `cdk synth` works offline and yields the same template on every machine;
 * `cdk deploy` picks the account and region from the caller's credentials. Settings come from
 * context (see infra/settings.ts).
 */
const app = new App();
addHarvester(app);
app.synth();
