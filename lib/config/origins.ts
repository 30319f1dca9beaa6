import { isIP } from 'node:net';

/**
 * Origins a secret may be sent to (`https://api.github.com`): the form both the stack's shared
 * secrets and the binding records hold them in. Pure, so the environment loader and the stack
 * settings check them the same way the API does.
 */

/** True for `localhost`, `*.localhost` and loopback IP literals (127.0.0.0/8, ::1, ::ffff:127.x). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || /^::ffff:(127\.|7f)/.test(host);
  return false;
}

/**
 * Why `text` cannot be a bound origin, or undefined when it can: an absolute `https://host[:port]`
 * with nothing after the host (`http://` only for a loopback host when `allowLoopback`), no
 * wildcard, no credentials.
 *
 * @example
 * originProblem('https://api.github.com', false) // undefined
 * originProblem('https://*.github.com', false)   // 'must name one host (no wildcards)'
 */
export function originProblem(text: string, allowLoopback: boolean): string | undefined {
  if (text.includes('*')) return 'must name one host (no wildcards)';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not an origin (scheme://host[:port])';
  }
  if (url.username || url.password) return 'must not carry credentials';
  if (url.origin !== text.replace(/\/$/, '').toLowerCase())
    return `must be an origin only (${url.origin}), without path, query or fragment`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && allowLoopback && isLoopbackHost(url.hostname)) return undefined;
  return 'must be https:// (a secret is never sent in the clear; http:// only to loopback in a local stack)';
}
