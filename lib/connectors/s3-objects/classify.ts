import { classifyDefault, safeReason } from '../../retry/classify.js';
import { type Classification, ClassifiedError, ItemValidationError } from '../../retry/errors.js';
import { EntityGoneError } from '../gone.js';

/**
 * S3's errors, classified by what the SDK reports — the error `name` (S3's error code), `$fault`
 * and `$retryable` — never by HTTP status (the class is a layer above the protocol).
 * S3 answers "slow down" with 503 and "no such bucket" with 404, but also `InvalidObjectState`
 * with 403 like `AccessDenied`; the code is what tells them apart.
 */

/** S3 (and SDK) error names that heal by waiting. */
export const S3_TRANSIENT_ERRORS = [
  'SlowDown', // request rate over the prefix's limit
  'RequestTimeout', // the socket was not read or written in time
  'InternalError',
  'ServiceUnavailable',
  'OperationAborted', // a conflicting operation on the bucket is in progress
  'Throttling',
  'ThrottlingException',
  'RequestThrottled',
  'TooManyRequestsException',
  'BandwidthLimitExceeded',
  'RequestTimeTooSkewed', // the SDK corrects its clock offset from the answer
  'ExpiredToken', // the credential provider refreshes role credentials
  'TimeoutError', // the SDK's own request timeout
] as const;

/** S3 error names that will not heal: the administrator must fix the source or the stack. */
export const S3_PERMANENT_ERRORS: Readonly<Record<string, string>> = {
  AccessDenied: "access denied: the worker's role may not read this bucket (see the stack's sourceBuckets)",
  Forbidden: "access denied: the worker's role may not read this bucket (see the stack's sourceBuckets)",
  NoSuchBucket: 'the bucket does not exist',
  InvalidObjectState: 'the object is archived (Glacier / Deep Archive) and must be restored first',
  NoSuchKey: 'the object does not exist',
  NotFound: 'the object does not exist',
  PermanentRedirect: "the bucket is in another region: set the source's region",
  AuthorizationHeaderMalformed: "the bucket is in another region: set the source's region",
  InvalidAccessKeyId: "the worker's credentials are not valid",
  SignatureDoesNotMatch: "the worker's credentials are not valid",
  AllAccessDisabled: 'all access to this bucket has been disabled',
  InvalidBucketName: 'the bucket name is not valid',
};

interface SdkErrorShape {
  readonly name: string;
  readonly message?: string;
  readonly $fault?: 'client' | 'server';
  readonly $retryable?: { readonly throttling?: boolean };
  readonly $metadata?: { readonly requestId?: string };
}

/** True for an error thrown by an AWS SDK v3 client for a service answer (it carries `$metadata`). */
function isSdkServiceError(error: unknown): error is SdkErrorShape {
  return (
    error instanceof Error &&
    typeof (error as { $metadata?: unknown }).$metadata === 'object' &&
    typeof (error as { $fault?: unknown }).$fault === 'string'
  );
}

function describe(error: SdkErrorShape, meaning: string | undefined): string {
  const request = error.$metadata?.requestId ? `, request ${error.$metadata.requestId}` : '';
  const message = error.message && error.message !== error.name ? `: ${error.message}` : '';
  return safeReason(`S3 ${error.name}${meaning ? ` (${meaning})` : ''}${message}${request}`);
}

function classifyService(error: SdkErrorShape): Classification {
  if ((S3_TRANSIENT_ERRORS as readonly string[]).includes(error.name)) {
    return { errorClass: 'transient', reason: describe(error, undefined) };
  }
  const meaning = S3_PERMANENT_ERRORS[error.name];
  if (meaning !== undefined) return { errorClass: 'permanent', reason: describe(error, meaning) };
  // Codes S3 may add later: the SDK's own metadata says whether the service throttled or failed.
  if (error.$retryable?.throttling === true || error.$fault === 'server') {
    return { errorClass: 'transient', reason: describe(error, undefined) };
  }
  return { errorClass: 'permanent', reason: describe(error, undefined) };
}

/**
 * Classifies an error of the `s3-objects` connector.
 *
 * | error | class |
 * |---|---|
 * | {@link S3_TRANSIENT_ERRORS}, any SDK error marked throttling or a server fault | transient |
 * | {@link S3_PERMANENT_ERRORS}, any other SDK client fault | permanent |
 * | {@link EntityGoneError} (`NoSuchKey` on an item fetch) | permanent: deleted at the source |
 * | network errors (connection reset, DNS, timeouts, aborts) | transient, as for every source |
 *
 * @param now - epoch ms (unused by S3, which sends no waits; kept for the connector contract).
 */
export function classifyS3(error: unknown, now: number): Classification {
  if (error instanceof EntityGoneError) {
    return { errorClass: 'permanent', reason: safeReason(`deleted at the source: ${error.message}`) };
  }
  if (error instanceof ClassifiedError || error instanceof ItemValidationError) {
    return classifyDefault(error, now);
  }
  if (isSdkServiceError(error)) return classifyService(error);
  if (error instanceof Error && error.name === 'TimeoutError') {
    return { errorClass: 'transient', reason: 'S3 request timed out' };
  }
  return classifyDefault(error, now);
}
