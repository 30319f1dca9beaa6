import { Logger } from '@aws-lambda-powertools/logger';

/** Log fields that identify a piece of work; every engine log line carries them. */
export interface WorkKeys {
  readonly runId?: string;
  readonly sourceId?: string;
  readonly epoch?: number;
  readonly page?: number;
  /** The partition of a partitioned run the page belongs to. */
  readonly partition?: number;
}

/** The structured JSON logger (Powertools). Never log secrets, tokens or full URLs with query strings. */
export type HarvesterLogger = Logger;

/** Keys Powertools owns on every line; an attribute of the same name would be dropped with a warning. */
const RESERVED_KEYS = new Set(['level', 'message', 'sampling_rate', 'service', 'timestamp']);

/** `attributes` with each reserved key renamed `<key>_` (`message` → `message_`), so no field is lost. */
export function keepReservedKeys(attributes: Record<string, unknown>): Record<string, unknown> {
  if (!Object.keys(attributes).some((key) => RESERVED_KEYS.has(key))) return attributes;
  return Object.fromEntries(
    Object.entries(attributes).map(([key, value]) => [RESERVED_KEYS.has(key) ? `${key}_` : key, value]),
  );
}

type ConstructorOptions = ConstructorParameters<typeof Logger>[0];
type ExtraInput = Parameters<Logger['info']>[1][];

/**
 * Powertools' logger, except that an attribute named like one of its own keys (`message`,
 * `level`, …) is kept under `<key>_` instead of being dropped. Children are of the same kind.
 */
class KeepingLogger extends Logger {
  protected override processLogItem(
    logLevel: number,
    input: Parameters<Logger['info']>[0],
    extra: ExtraInput,
  ): void {
    const kept = extra.map((item) =>
      item && typeof item === 'object' && !(item instanceof Error)
        ? keepReservedKeys(item as Record<string, unknown>)
        : item,
    );
    super.processLogItem(logLevel, input, kept as ExtraInput as never);
  }

  protected override createLogger(options?: ConstructorOptions): Logger {
    return new KeepingLogger(options);
  }
}

/** Creates the root logger; `SILENT` keeps tests quiet. */
export function createLogger(
  level: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT' = 'INFO',
): HarvesterLogger {
  return new KeepingLogger({ serviceName: 'harvester', logLevel: level });
}

/** A child logger whose every line carries the run, source, epoch and page. */
export function workLogger(logger: HarvesterLogger, keys: WorkKeys): HarvesterLogger {
  return logger.createChild({ persistentKeys: { ...keys } });
}
