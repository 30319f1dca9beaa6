import { Logger } from '@aws-lambda-powertools/logger';

/** Log fields that identify a piece of work; every engine log line carries them. */
export interface WorkKeys {
  readonly runId?: string;
  readonly sourceId?: string;
  readonly epoch?: number;
  readonly page?: number;
}

/** The structured JSON logger (Powertools). Never log secrets, tokens or full URLs with query strings. */
export type HarvesterLogger = Logger;

/** Creates the root logger; `SILENT` keeps tests quiet. */
export function createLogger(
  level: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT' = 'INFO',
): HarvesterLogger {
  return new Logger({ serviceName: 'harvester', logLevel: level });
}

/** A child logger whose every line carries the run, source, epoch and page. */
export function workLogger(logger: HarvesterLogger, keys: WorkKeys): HarvesterLogger {
  return logger.createChild({ persistentKeys: { ...keys } });
}
