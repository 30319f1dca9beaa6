import type { HarvesterLogger } from './logger.js';

/** The methods that write a line; everything else of the logger is passed through. */
const WRITES = new Set(['trace', 'debug', 'info', 'warn', 'error', 'critical']);

/** A scrub of any value (a message, an attributes object), identity when there is nothing to hide. */
export type Scrub = <T>(value: T) => T;

/** An error with its message and stack scrubbed; the same error when they hold nothing to hide. */
function scrubError(error: Error, scrub: Scrub): Error {
  const message = scrub(error.message);
  const stack = error.stack === undefined ? undefined : scrub(error.stack);
  if (message === error.message && stack === error.stack) return error;
  const copy = new Error(message);
  copy.name = error.name;
  copy.stack = stack;
  return copy;
}

/** One argument of a log call: a message, an error, or attributes (whose errors are scrubbed too). */
function scrubArgument(value: unknown, scrub: Scrub): unknown {
  if (value instanceof Error) return scrubError(value, scrub);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return scrub(value);
  const scrubbed = scrub(value) as Record<string, unknown>;
  let changed = scrubbed !== value;
  const entries = Object.entries(scrubbed).map(([key, inner]) => {
    if (!(inner instanceof Error)) return [key, inner] as const;
    const error = scrubError(inner, scrub);
    if (error !== inner) changed = true;
    return [key, error] as const;
  });
  return changed ? Object.fromEntries(entries) : value;
}

/**
 * `logger` with every line it (or a child of it) writes passed through `scrub` first: message,
 * attributes and errors. For the page step, whose lines quote what a source answered (a failure
 * reason, a next-page URL) and so may quote what it was sent.
 *
 * @example
 * const log = scrubbedLogger(workLogger(root, keys), scrubber.scrub);
 * log.warn('retrying', { reason }); // a resolved secret in `reason` prints as <redacted>
 */
export function scrubbedLogger(logger: HarvesterLogger, scrub: Scrub): HarvesterLogger {
  return new Proxy(logger, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property === 'createChild')
        return (...args: unknown[]) =>
          scrubbedLogger((value as (...a: unknown[]) => HarvesterLogger).apply(target, args), scrub);
      if (typeof property === 'string' && WRITES.has(property))
        return (...args: unknown[]) =>
          (value as (...a: unknown[]) => unknown).apply(
            target,
            args.map((arg) => scrubArgument(arg, scrub)),
          );
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}
