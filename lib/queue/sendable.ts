import { type PageMessage, PageMessageSchema } from './page-message.js';

/**
 * Whether a page message can travel: a message the worker would refuse, or one SQS refuses, is
 * refused the same way on every attempt. Sending it anyway (and again from the reaper, every 15
 * minutes) would keep a run alive that can never move, so such a message is refused here, before
 * it leaves, with the reason named.
 */

/** SQS's limit on a message body (256 KiB). */
export const SQS_MAX_BODY_BYTES = 262_144;

/**
 * Characters SQS refuses in a body (it accepts #x9, #xA, #xD, #x20–#xD7FF, #xE000–#xFFFD and
 * #x10000–#x10FFFF). JSON escapes control characters and lone surrogates, but not U+FFFE/U+FFFF.
 */
const REFUSED_BY_SQS = /[\uFFFE\uFFFF]/;

/** A page message that cannot be delivered, whatever the number of attempts. */
export class UnsendableMessageError extends Error {
  override readonly name = 'UnsendableMessageError';
}

/**
 * The body of `message` as it goes on the queue; throws {@link UnsendableMessageError} when the
 * worker would refuse it (the receiving schema: a cursor longer than the message allows, say) or
 * SQS would (size, characters).
 */
export function sendableBody(message: PageMessage): string {
  const parsed = PageMessageSchema.safeParse(message);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new UnsendableMessageError(`the page message would be refused by the worker: ${problems}`);
  }
  const body = JSON.stringify(message);
  if (Buffer.byteLength(body) > SQS_MAX_BODY_BYTES)
    throw new UnsendableMessageError(
      `the page message is ${Buffer.byteLength(body)} bytes, more than SQS accepts`,
    );
  if (REFUSED_BY_SQS.test(body))
    throw new UnsendableMessageError('the page message holds characters SQS refuses (U+FFFE or U+FFFF)');
  return body;
}

/**
 * Whether an SQS (or Scheduler) error refuses the message itself — its content or size — rather
 * than the moment: sent again, it would be refused again.
 */
export function refusesTheMessage(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const name = error.name.replace(/^AWS\.SimpleQueueService\./, '');
  if (name === 'InvalidMessageContents' || name === 'MessageTooLong') return true;
  return name === 'InvalidParameterValue' && /message must be shorter|too long/i.test(error.message);
}
