/**
 * The package's face for CDK apps: the {@link Harvester} construct to add to a stack of your own,
 * the ready-made {@link HarvesterStack}, and the settings both take. The package's `exports` point
 * at this module compiled (dist/cdk/infra/index.js); the cdk-nag checks are a second entry point,
 * `harvester/nag` (infra/nag.ts), so that an app without cdk-nag never loads it.
 */
export { HARVESTER_OUTPUTS, Harvester, type HarvesterOutput, type HarvesterProps } from './harvester.js';
export {
  DEFAULT_SETTINGS,
  type HarvesterSettings,
  type LogLevel,
  resolveSettings,
  SETTINGS_CONTEXT,
  settingsFromProps,
} from './settings.js';
export { HarvesterStack, type HarvesterStackProps } from './stack.js';
