/**
 * The admin API's own errors: what is wrong with a request before any store is asked. Like
 * every other error in Harvester they carry context, and {@link problemFor} (problems.ts) is the
 * only place that turns them, and everyone else's, into an HTTP status.
 */

/** One field that failed validation: a dot path (`config.pagination.cursorParam`, `limit`) and why. */
export interface FieldError {
  readonly path: string;
  readonly message: string;
}

/** Where in the request a field lives. */
export type RequestPart = 'body' | 'query' | 'path';

/** Base of the API's errors. */
export class ApiError extends Error {
  override readonly name: string = 'ApiError';
}

/** A path parameter, query parameter or body field failed its schema. */
export class RequestValidationError extends ApiError {
  override readonly name = 'RequestValidationError';
  constructor(
    readonly part: RequestPart,
    readonly errors: readonly FieldError[],
  ) {
    const list = errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join('; ');
    super(
      `invalid request ${part === 'path' ? 'path' : part === 'query' ? 'query string' : 'body'}: ${list}`,
    );
  }
}

/** The body is not parseable JSON. */
export class MalformedJsonError extends ApiError {
  override readonly name = 'MalformedJsonError';
}

/** The body is larger than the API accepts. */
export class PayloadTooLargeError extends ApiError {
  override readonly name = 'PayloadTooLargeError';
  constructor(readonly limitBytes: number) {
    super(`the request body exceeds ${limitBytes / 1024} KB`);
  }
}

/** The body is not declared as JSON. */
export class UnsupportedMediaTypeError extends ApiError {
  override readonly name = 'UnsupportedMediaTypeError';
  constructor(readonly contentType: string | undefined) {
    super(
      contentType
        ? `content type "${contentType}" is not supported; send application/json`
        : 'a request body needs the content type application/json',
    );
  }
}

/** No route has this path. */
export class RouteNotFoundError extends ApiError {
  override readonly name = 'RouteNotFoundError';
  constructor(readonly path: string) {
    super(`no route matches ${path}`);
  }
}

/** A route has this path, but not this method. */
export class MethodNotAllowedError extends ApiError {
  override readonly name = 'MethodNotAllowedError';
  constructor(
    readonly method: string,
    readonly allowed: readonly string[],
  ) {
    super(`${method} is not allowed here; allowed: ${allowed.join(', ')}`);
  }
}

/** Every connection-check slot of the source is taken (lib/store/source-test-leases.ts): 429. */
export class SourceTestsBusyError extends ApiError {
  override readonly name = 'SourceTestsBusyError';
  constructor(
    readonly sourceId: string,
    readonly running: number,
    readonly retryAfterSeconds: number,
  ) {
    super(
      `${running} connection checks of source ${sourceId} are running, the most one source may have at once; try again in ${retryAfterSeconds} s`,
    );
  }
}

/**
 * The check function (functions/source-check.ts) was not let run: its reserved concurrency is
 * spent by checks of other sources (Lambda's `TooManyRequestsException`). 429, as a busy source.
 */
export class SourceChecksThrottledError extends ApiError {
  override readonly name = 'SourceChecksThrottledError';
  constructor(readonly retryAfterSeconds: number) {
    super(
      `the most connection checks the stack runs at once are running; try again in ${retryAfterSeconds} s`,
    );
  }
}

/** The check function failed, or answered what a check never answers: 502 (the detail stays in the log). */
export class SourceCheckFailedError extends ApiError {
  override readonly name = 'SourceCheckFailedError';
}

/** A config value looks like a credential itself rather than a reference to one. */
export class RawSecretError extends ApiError {
  override readonly name = 'RawSecretError';
  constructor(readonly errors: readonly FieldError[]) {
    super(
      'the config holds what looks like a raw credential; store it in SSM or Secrets Manager and reference it',
    );
  }
}

/** The config points where this stack does not let sources go, or uses a secret it may not. */
export class SourcePolicyError extends ApiError {
  override readonly name = 'SourcePolicyError';
  constructor(readonly errors: readonly FieldError[]) {
    super(
      "the config breaks this stack's source policy (secrets bound to the source, https with secrets, allowed hosts and addresses); see errors",
    );
  }
}

/**
 * A dead letter that is gone because a run loaded its entity since: there is nothing left to
 * discard. `runId` names the run that stored the entity's current version.
 */
export class DeadLetterResolvedError extends ApiError {
  override readonly name = 'DeadLetterResolvedError';
  constructor(
    readonly entryId: string,
    readonly runId: string,
    detail: string,
  ) {
    super(detail);
  }
}
