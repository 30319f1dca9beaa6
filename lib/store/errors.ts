/**
 * The store's own errors. Callers never see `ConditionalCheckFailedException`: each refused
 * conditional write is translated into what it means for the run, which decides the caller's
 * behaviour (drop the message, stop the worker, answer 409).
 */
export class StoreError extends Error {
  override readonly name: string = 'StoreError';
  constructor(
    message: string,
    readonly context: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The writer no longer owns the run or chain it writes: a newer epoch fenced it, the run was
 * cancelled or has ended, or it is gone. A worker that meets one stops quietly and acknowledges
 * its message; nothing it holds may be written any more. The subclasses say which.
 */
export class OwnershipLostError extends StoreError {
  override readonly name: string = 'OwnershipLostError';
}

/** No run with that id. */
export class RunNotFoundError extends OwnershipLostError {
  override readonly name = 'RunNotFoundError';
}

/** The write carried an old epoch: the reaper has re-armed the run and this worker is a zombie. */
export class RunFencedError extends OwnershipLostError {
  override readonly name = 'RunFencedError';
}

/** The run was cancelled; the worker must stop and never resume it. */
export class RunCancelledError extends OwnershipLostError {
  override readonly name = 'RunCancelledError';
}

/** The run already ended (succeeded or failed); nothing may change it any more. */
export class RunFinishedError extends OwnershipLostError {
  override readonly name = 'RunFinishedError';
}

/** The run is not in a state that allows the write (for example a commit on a queued run). */
export class RunStateError extends StoreError {
  override readonly name = 'RunStateError';
}

/** The page was already committed: a duplicate or redelivered message. Acknowledge and drop it. */
export class DuplicatePageError extends StoreError {
  override readonly name = 'DuplicatePageError';
}

/** The page is ahead of the run's next expected page: a message from a lineage that does not exist. */
export class PageOutOfOrderError extends StoreError {
  override readonly name = 'PageOutOfOrderError';
}

/** A run with that id already exists. */
export class RunExistsError extends StoreError {
  override readonly name = 'RunExistsError';
}

/** No source with that id. */
export class SourceNotFoundError extends StoreError {
  override readonly name = 'SourceNotFoundError';
}

/** No stored entity with that id in the source. */
export class ItemNotFoundError extends StoreError {
  override readonly name = 'ItemNotFoundError';
}

/** No dead letter with that entry id in the source: never recorded, or a retry resolved it. */
export class DeadLetterNotFoundError extends StoreError {
  override readonly name = 'DeadLetterNotFoundError';
}

/** A dead letter that cannot be discarded: it was discarded already (`discard` says when, by whom, why). */
export class DeadLetterConflictError extends StoreError {
  override readonly name = 'DeadLetterConflictError';
  constructor(
    readonly entryId: string,
    readonly discard: { readonly at: number; readonly by: string | null; readonly reason: string },
  ) {
    super(
      `dead letter ${entryId} was discarded already, at ${new Date(discard.at).toISOString()}${discard.by ? ` by ${discard.by}` : ''}: ${discard.reason}`,
      { entryId },
    );
  }
}

/** The source already has an active run; `activeRunId` names it (the API answers 409 with it). */
export class SourceBusyError extends StoreError {
  override readonly name = 'SourceBusyError';
  constructor(
    readonly sourceId: string,
    readonly activeRunId: string,
  ) {
    super(`source ${sourceId} already has an active run ${activeRunId}`, { sourceId, activeRunId });
  }
}

/** Release of a source lock by a run that does not hold it. */
export class LockNotHeldError extends StoreError {
  override readonly name = 'LockNotHeldError';
}

/** True for the SDK's refused-condition error, by name, so both the raw and the document client match. */
export function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** The per-operation reasons of a cancelled transaction, or undefined for any other error. */
export function transactionReasons(error: unknown): (string | undefined)[] | undefined {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
  if (reasons) return reasons.map((r) => r.Code);
  // Some emulators only put the reasons in the message: "... [ConditionalCheckFailed, None]".
  const match = /\[([^\]]*)\]/.exec(error.message);
  return match?.[1]?.split(',').map((code) => code.trim());
}

/**
 * DynamoDB refused a request for its shape (an unused expression value, a reserved word, a
 * malformed expression): a defect in Harvester's code, never in the record it carried. It fails
 * the page loudly instead of dead-lettering each entity: with such a defect every entity of every
 * page would be refused the same way.
 */
export class RequestRefusedError extends StoreError {
  override readonly name = 'RequestRefusedError';
}

/**
 * The refusals that are about one item's contents: DynamoDB's limits on item size, nesting
 * depth, key length and numbers (messages as DynamoDB words them). Only these make an entity
 * `unstorable`; any other `ValidationException` is about the request.
 */
const ITEM_LIMIT_REFUSALS = [
  /Item size (?:to update )?has exceeded the maximum allowed size/,
  /Nesting Levels have exceeded supported limits/,
  /Size of hashkey has exceeded the maximum size limit/,
  /Aggregated size of all range keys has exceeded the size limit/,
  /Number (?:overflow|underflow)\. Attempting to store a number with magnitude/,
  /Attempting to store more than 38 significant digits in a Number/,
];

function isValidation(error: unknown): error is Error {
  return error instanceof Error && error.name === 'ValidationException';
}

/**
 * DynamoDB's reason for refusing an item for its contents (a number out of range, nesting too
 * deep, an item over 400 KB, a key too long), or null for any other error, a refusal of the
 * request's shape included (see {@link requestRefusal}).
 */
export function valueRefusal(error: unknown): string | null {
  if (!isValidation(error) || !ITEM_LIMIT_REFUSALS.some((limit) => limit.test(error.message))) return null;
  return `DynamoDB refused the record: ${error.message}`;
}

/**
 * The {@link RequestRefusedError} for a `ValidationException` that is not about the item's
 * contents, or null for any other error.
 */
export function requestRefusal(error: unknown, context: Record<string, unknown>): RequestRefusedError | null {
  if (!isValidation(error) || valueRefusal(error) !== null) return null;
  return new RequestRefusedError(`DynamoDB refused the request itself: ${error.message}`, context, {
    cause: error,
  });
}
