import type { Classification } from '../retry/errors.js';
import { SourceHttpError } from '../retry/errors.js';
import type { ConnectorContext } from './contract.js';

/**
 * True when a failed request says the credential itself is bad: 401, or a 403 the connector does
 * not classify as a rate limit (GitHub answers rate limits with 403 too).
 */
export function rejectsCredential(error: unknown, classify: (error: unknown) => Classification): boolean {
  if (!(error instanceof SourceHttpError)) return false;
  if (error.status === 401) return true;
  return error.status === 403 && classify(error).errorClass === 'permanent';
}

/**
 * Runs `request` with the secret behind `reference` (or without one when there is none). When the
 * source rejects the credential, the cached value is dropped and, if the store now holds a
 * different one (the secret was rotated), the request is sent once more with it; otherwise the
 * original error stands. So a rotation is picked up at the first rejection, not at the cache TTL.
 */
export async function withCredential<T>(
  ctx: ConnectorContext,
  reference: string | undefined,
  classify: (error: unknown) => Classification,
  request: (secret: string | undefined) => Promise<T>,
): Promise<T> {
  if (reference === undefined) return request(undefined);
  const secret = await ctx.secrets(reference);
  try {
    return await request(secret);
  } catch (error) {
    if (!ctx.secrets.invalidate || !rejectsCredential(error, classify)) throw error;
    ctx.secrets.invalidate(reference);
    const fresh = await ctx.secrets(reference);
    if (fresh === secret) throw error;
    return request(fresh);
  }
}
