/**
 * Error classes decide behaviour: a transient error is retried (or deferred), a
 * permanent one goes straight to dead_letters. The class is a layer above the protocol: HTTP,
 * S3, databases and mail all map onto it.
 */
export const ERROR_CLASSES = ['transient', 'permanent'] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

/** A connector's verdict on one error. */
export interface Classification {
  readonly errorClass: ErrorClass;
  /** A wait the source asked for (Retry-After, rate-limit reset); overrides the computed backoff. */
  readonly waitMs?: number;
  /** A short human-readable reason, stored with dead letters: "HTTP 503 from api.github.com". */
  readonly reason: string;
}

/**
 * A failed response from a source, carrying what classification needs. Connectors throw it;
 * the retry loop never looks at status codes itself.
 */
export class SourceHttpError extends Error {
  override readonly name = 'SourceHttpError';
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    /** A bounded excerpt of the response body. */
    readonly bodyExcerpt: string,
    readonly url: string,
  ) {
    super(`HTTP ${status} from ${safeUrl(url)}`);
  }
}

/** The source answered, but with something that is not what the connector expects (not JSON, wrong shape). */
export class SourceResponseError extends Error {
  override readonly name = 'SourceResponseError';
  constructor(
    message: string,
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A record failed normalization or validation: permanent for that item. */
export class ItemValidationError extends Error {
  override readonly name = 'ItemValidationError';
}

/**
 * An error whose class the thrower already knows: a connector that can tell "this will never
 * work" (no item URL configured, a corrupt cursor) says so instead of relying on a status code.
 * Modelled on Temporal's `ApplicationFailure` with `nonRetryable`; the default classifier honours it.
 *
 * @example
 * throw new ClassifiedError('permanent', 'retry by id is unavailable: no `itemUrl` configured');
 */
export class ClassifiedError extends Error {
  override readonly name = 'ClassifiedError';
  /** A wait the thrower asks for before a transient retry. */
  readonly waitMs: number | undefined;
  constructor(
    readonly errorClass: ErrorClass,
    message: string,
    options?: { cause?: unknown; waitMs?: number },
  ) {
    super(message, options);
    this.waitMs = options?.waitMs;
  }
}

/** A URL without its query string (which may carry tokens) for logs and dead-letter reasons. */
export function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '<invalid url>';
  }
}
