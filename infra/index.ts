/**
 * The package's face for CDK apps: the {@link Harvester} construct to add to a stack of your own,
 * the ready-made {@link HarvesterStack}, and the settings both take.
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
