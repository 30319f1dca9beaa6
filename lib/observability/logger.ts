import { Logger } from '@aws-lambda-powertools/logger';
import { HarvesterLogFormatter } from './log-formatter.js';
import type { WorkKeys } from './work-keys.js';

export type { WorkKeys } from './work-keys.js';

/**
 * The structured JSON logger (Powertools with {@link HarvesterLogFormatter}). Never log secrets,
 * tokens or full URLs with query strings. Powertools owns `level`, `message`, `timestamp`,
 * `service` and `sampling_rate` and drops an attribute of the same name: name a detail
 * `detail`, `problem` or `reason` instead.
 */
export type HarvesterLogger = Logger;

/** Creates the root logger; `SILENT` keeps tests quiet. */
export function createLogger(
  level: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT' = 'INFO',
): HarvesterLogger {
  return new Logger({ serviceName: 'harvester', logLevel: level, logFormatter: new HarvesterLogFormatter() });
}

/** A child logger whose every line carries the run, source, epoch and page. */
export function workLogger(logger: HarvesterLogger, keys: WorkKeys): HarvesterLogger {
  return logger.createChild({ persistentKeys: { ...keys } });
}
