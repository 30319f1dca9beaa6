import { gzipSync } from 'node:zlib';
import { type Reply, replyText } from '../http.js';

/**
 * The `gzip` trait: GitHub, GitLab and most APIs compress an answer when the request's
 * `Accept-Encoding` allows it (Node's `fetch` always sends `gzip, deflate, br`), so a client's
 * byte limits must count what it inflates, not what crossed the wire.
 */
export function gzipped(reply: Reply, acceptEncoding: string | undefined): Reply {
  if (!acceptEncoding || !/\bgzip\b/i.test(acceptEncoding)) return reply;
  const contentType = reply.raw?.contentType ?? 'application/json; charset=utf-8';
  return {
    status: reply.status,
    raw: { contentType, text: '' },
    bytes: gzipSync(replyText(reply)),
    headers: { ...reply.headers, 'content-encoding': 'gzip', vary: 'Accept-Encoding' },
  };
}
