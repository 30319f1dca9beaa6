import { type Reply, replyText } from '../http.js';
import type { Traits } from './schema.js';

/**
 * The `padBytes` and `hideLength` traits: answers larger than anything a page needs, and answers
 * that do not say how large they are. Padding is JSON whitespace after the body, so the body means
 * the same and only its size changes; gzip (the `gzip` trait) shrinks it about a thousandfold, which
 * makes a decompression bomb: the 49 KB reply that inflates to 48 MB a broken or hostile endpoint
 * sends. Without `Content-Length` (chunked transfer, as streaming proxies and export endpoints
 * answer) a client cannot refuse the body before reading it; it can only stop counting.
 */
export function padded(reply: Reply, traits: Pick<Traits, 'padBytes'>): Reply {
  if (traits.padBytes === 0 || reply.bytes !== undefined) return reply;
  const contentType = reply.raw?.contentType ?? 'application/json; charset=utf-8';
  return { ...reply, raw: { contentType, text: replyText(reply) + ' '.repeat(traits.padBytes) } };
}

/** The answer as the `hideLength` trait sends it: chunked, its length unsaid. */
export function lengthHidden(reply: Reply, traits: Pick<Traits, 'hideLength'>): Reply {
  return traits.hideLength ? { ...reply, chunked: true } : reply;
}
