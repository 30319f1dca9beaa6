import { z } from 'zod';

/**
 * One page of work, as carried by SQS (and by deferral schedules). The message names the run,
 * the epoch that enqueued it and the page sequence number: the worker's conditional writes on
 * those three make duplicates and stale messages harmless.
 */
export const PageMessageSchema = z.strictObject({
  v: z.literal(1),
  runId: z.string().min(1).max(64),
  sourceId: z.string().min(1).max(128),
  epoch: z.number().int().positive(),
  page: z.number().int().positive(),
  /** Cursor of this page; null for the first page of a stream. */
  cursor: z.string().max(8_192).nullable(),
  /** Set when the message wakes a deferred page: the continuation checks the freshness budget. */
  deferred: z.boolean().optional(),
  /**
   * Source attempts this page already spent in earlier deliveries that deferred it: the attempt
   * budget carries across deferrals instead of starting again at 1 on every wake-up.
   */
  attempts: z.number().int().nonnegative().max(1_000).optional(),
  /**
   * The partition of a partitioned run this page belongs to: `page` then numbers the pages of
   * that partition's own chain. Absent: the run's one chain (or its planning step, page 1).
   */
  partition: z.number().int().nonnegative().max(63).optional(),
  /**
   * The rate-budget slot the page was deferred to (epoch ms: good from `at` until its window ends
   * at `until`): its first request spends that reservation instead of queueing again.
   */
  budgetSlot: z.strictObject({ at: z.number().int(), until: z.number().int() }).optional(),
});
export type PageMessage = z.infer<typeof PageMessageSchema>;

/** Raised for a body that is not a page message (the redrive drain turns such messages into dead letters). */
export class MalformedMessageError extends Error {
  override readonly name = 'MalformedMessageError';
}

/** Parses an SQS body into a page message, or throws {@link MalformedMessageError} naming the problem. */
export function parsePageMessage(body: string): PageMessage {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new MalformedMessageError('message body is not JSON');
  }
  const parsed = PageMessageSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new MalformedMessageError(`message is not a page message: ${problems}`);
  }
  return parsed.data;
}
