import { ClassifiedError } from '../../retry/errors.js';
import { type PositionRef, positionDigest, storedBytes } from '../../store/positions.js';
import type { EngineDeps } from '../deps.js';
import { TOMBSTONE_SLICE } from '../work/tombstone-cursor.js';

/*
 * Positions by reference. A connector's position is whatever its next cursor is:
 * a page number, a source token, a keyset position holding the ids it read at a tie. Its size is
 * the source's doing — a tie group of long ids, a source token that grows — but a page message
 * and a run item have fixed limits. So a position travels inline only while it is small; a
 * larger one is stored in its own item and the message and the checkpoint carry a reference of
 * constant size. Past the stored ceiling the run ends `failed` (`position_too_large`): nothing
 * is lost silently, and a person sees why.
 */

/** Positions up to this many characters travel inline, on the message and in the checkpoint. */
export const INLINE_POSITION_CHARS = 1_024;

/**
 * The most a stored position may take in its item, gzipped: DynamoDB's 400 KB item limit less
 * room for the key and attributes. A keyset position of a tie group holds about 20,000 ids below it.
 */
export const MAX_STORED_POSITION_BYTES = 300 * 1_024;

/** The failure reason of a run whose next position is larger than a run may keep. */
export const POSITION_TOO_LARGE = 'position_too_large';

/** References start with this; a connector cursor that happens to start with it is stored too. */
const REF_PREFIX = 'pos1:';

/** A position above {@link MAX_STORED_POSITION_BYTES}. */
export class PositionTooLargeError extends Error {
  override readonly name = 'PositionTooLargeError';
}

/** Whether a cursor is a reference to a stored position. */
export function isPositionRef(cursor: string | null): cursor is string {
  return cursor?.startsWith(REF_PREFIX) ?? false;
}

/**
 * The cursor that travels for the position `cursor` reached by a commit of page `page - 1` of
 * the run's chain (`partition` undefined) or of a partition's: the position itself when small,
 * else a reference to it, stored first.
 * @throws PositionTooLargeError past {@link MAX_STORED_POSITION_BYTES}.
 */
export async function carriedPosition(
  deps: EngineDeps,
  runId: string,
  partition: number | undefined,
  page: number,
  cursor: string | null,
): Promise<string | null> {
  // A tombstone slice's cursor is routed on sight (work/tombstone-cursor.ts) and bounded by the store's
  // own key length (an entity id of at most 1 KB): it always travels as it is.
  if (cursor === null || cursor.startsWith(TOMBSTONE_SLICE)) return cursor;
  if (cursor.length <= INLINE_POSITION_CHARS && !isPositionRef(cursor)) return cursor;
  const stored = storedBytes(cursor);
  if (stored.length > MAX_STORED_POSITION_BYTES) {
    throw new PositionTooLargeError(
      `the position after page ${page - 1} takes ${Math.ceil(stored.length / 1_024)} KB compressed ` +
        `(${cursor.length} characters), more than the ${MAX_STORED_POSITION_BYTES / 1_024} KB a run can keep`,
    );
  }
  const ref: PositionRef = {
    runId,
    chain: partition === undefined ? 'run' : `p${partition}`,
    page,
    digest: positionDigest(cursor),
  };
  await deps.positions.put(ref, stored, deps.clock.now());
  return `${REF_PREFIX}${ref.runId}:${ref.chain}:${ref.page}:${ref.digest}`;
}

/**
 * The position a travelling cursor stands for: itself, or the stored position it refers to.
 * @throws ClassifiedError (permanent) when the reference is not one, or its position is gone.
 */
export async function resolvedPosition(deps: EngineDeps, cursor: string | null): Promise<string | null> {
  if (!isPositionRef(cursor)) return cursor;
  const [runId, chain, page, digest] = cursor.slice(REF_PREFIX.length).split(':');
  if (!runId || !chain || !digest || !Number.isSafeInteger(Number(page))) {
    throw new ClassifiedError('permanent', `\`${cursor.slice(0, 80)}\` is not a stored position's reference`);
  }
  const position = await deps.positions.get({ runId, chain, page: Number(page), digest });
  if (position === undefined) {
    throw new ClassifiedError(
      'permanent',
      `the stored position ${cursor} is gone (positions are kept 30 days): the page cannot be fetched again`,
    );
  }
  return position;
}
