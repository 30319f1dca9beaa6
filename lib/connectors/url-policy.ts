import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/**
 * Where a source URL may point (SSRF posture). Source URLs are set by whoever may call the admin
 * API, and the worker runs inside the AWS account: a URL must never reach the instance metadata
 * service, the Lambda runtime API on loopback, or (by default) the account's private network.
 *
 * Checked twice: when a source is written (`PUT /sources`, answered with problem+json) and before
 * every request the worker sends (each redirect hop included), on the addresses the host resolves
 * to at that moment.
 */
export interface SourcePolicy {
  /** Loopback (127.0.0.0/8, ::1) reachable. Only the local stack says so. */
  readonly allowLoopback: boolean;
  /**
   * Private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, site-local fec0::/10, local-use
   * NAT64 64:ff9b:1::/48) reachable. Default off on AWS.
   */
  readonly allowPrivate: boolean;
  /** When not empty, source hosts must match one entry: `api.example.com` or `*.example.com`. */
  readonly allowedHosts: readonly string[];
  /**
   * Secret references every source may use besides those under its own `harvester/<sourceId>/`
   * prefix (a shared organization token), as `ssm:/name` or `secretsmanager:name`.
   */
  readonly sharedSecrets: readonly string[];
  /** The origins each shared secret may be sent to (lib/config/shared-secrets.ts). */
  readonly sharedSecretOrigins: Readonly<Record<string, readonly string[]>>;
}

/** The posture of a stack on AWS: public hosts only, no shared secrets. */
export const STRICT_SOURCE_POLICY: SourcePolicy = {
  allowLoopback: false,
  allowPrivate: false,
  allowedHosts: [],
  sharedSecrets: [],
  sharedSecretOrigins: {},
};

/** Resolves a host name to its addresses (injected so tests never need DNS). */
export type HostLookup = (hostname: string) => Promise<string[]>;

/** The system resolver, every address (A and AAAA). */
export const systemLookup: HostLookup = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** What kind of network an address is on. */
export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'reserved';

type Range = readonly [base: number, bits: number, kind: AddressKind];

const ip4 = (a: number, b: number, c: number, d: number) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

/** IPv4 ranges that are not the public internet, most specific first. */
const IPV4_RANGES: readonly Range[] = [
  [ip4(169, 254, 169, 254), 32, 'metadata'],
  [ip4(169, 254, 170, 2), 32, 'metadata'], // ECS task metadata / credentials
  [ip4(0, 0, 0, 0), 8, 'unspecified'], // 0.0.0.0 connects to the local host
  [ip4(127, 0, 0, 0), 8, 'loopback'],
  [ip4(169, 254, 0, 0), 16, 'link-local'],
  [ip4(10, 0, 0, 0), 8, 'private'],
  [ip4(172, 16, 0, 0), 12, 'private'],
  [ip4(192, 168, 0, 0), 16, 'private'],
  [ip4(100, 64, 0, 0), 10, 'private'], // carrier-grade NAT, used inside VPCs too
  [ip4(192, 0, 0, 0), 24, 'reserved'],
  [ip4(198, 18, 0, 0), 15, 'reserved'], // benchmarking
  [ip4(224, 0, 0, 0), 4, 'reserved'], // multicast
  [ip4(240, 0, 0, 0), 4, 'reserved'], // reserved and broadcast
];

function parseIpv4(address: string): number {
  const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
  return ip4(a, b, c, d);
}

function kindOfIpv4(address: string): AddressKind {
  const value = parseIpv4(address);
  for (const [base, bits, kind] of IPV4_RANGES) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((value & mask) >>> 0 === base) return kind;
  }
  return 'public';
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a dotted IPv4 tail converted). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().split('%')[0] ?? '';
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const v4 = parseIpv4(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const part = (s: string) => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * IPv6 ranges that are not the public internet, from IANA's IPv6 special-purpose address registry
 * (most specific first), checked after the forms that embed an IPv4 address. Transition ranges
 * whose far end is another network (6to4, Teredo, local NAT64) are refused whole: the IPv4 host
 * behind them cannot be judged from here, and no source API is reached only that way.
 */
const IPV6_RANGES: readonly (readonly [prefix: string, bits: number, kind: AddressKind])[] = [
  ['fd00:ec2::254', 128, 'metadata'], // the EC2 metadata service over IPv6
  ['64:ff9b:1::', 48, 'private'], // local-use IPv4/IPv6 translation (RFC 8215): an operator's own NAT64
  ['100::', 64, 'reserved'], // discard-only (RFC 6666)
  ['100:0:0:1::', 64, 'reserved'], // dummy prefix (RFC 9780)
  // IETF protocol assignments: Teredo (2001::/32, a tunnel to an IPv4 host hidden in the address),
  // benchmarking (2001:2::/48), ORCHID (2001:10::/28) and ORCHIDv2 (2001:20::/28) among them.
  ['2001::', 23, 'reserved'],
  ['2001:db8::', 32, 'reserved'], // documentation
  ['2002::', 16, 'reserved'], // 6to4 (deprecated, RFC 7526): relays to the IPv4 host in bits 16–48
  ['3fff::', 20, 'reserved'], // documentation (RFC 9637)
  ['5f00::', 16, 'reserved'], // SRv6 segment identifiers (RFC 9602)
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'], // site-local (deprecated, RFC 3879), still routed inside some networks
  ['fc00::', 7, 'private'], // unique local
  ['ff00::', 8, 'reserved'], // multicast
];

/** An IPv6 address as one 128-bit number. */
function ipv6Value(groups: readonly number[]): bigint {
  return groups.reduce((value, group) => (value << 16n) | BigInt(group), 0n);
}

const IPV6_TABLE = IPV6_RANGES.map(([prefix, bits, kind]) => {
  const mask = ((1n << BigInt(bits)) - 1n) << BigInt(128 - bits);
  return { base: ipv6Value(ipv6Groups(prefix)) & mask, mask, kind };
});

/** Global unicast (2000::/3) is the only IPv6 space IANA hands out for the internet. */
const GLOBAL_UNICAST = { base: 0x2n << 124n, mask: 0x7n << 125n };

function kindOfIpv6(address: string): AddressKind {
  const g = ipv6Groups(address);
  const embeddedV4 = () => `${g[6]! >> 8}.${g[6]! & 0xff}.${g[7]! >> 8}.${g[7]! & 0xff}`;
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach an IPv4 host.
  if (zeros(5) && g[5] === 0xffff) return kindOfIpv4(embeddedV4());
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0))
    return kindOfIpv4(embeddedV4());
  if (zeros(7) && g[7] === 0) return 'unspecified';
  if (zeros(7) && g[7] === 1) return 'loopback';
  if (zeros(6) && (g[6] !== 0 || g[7]! > 1)) return kindOfIpv4(embeddedV4());
  const value = ipv6Value(g);
  for (const { base, mask, kind } of IPV6_TABLE) if ((value & mask) === base) return kind;
  return (value & GLOBAL_UNICAST.mask) === GLOBAL_UNICAST.base ? 'public' : 'reserved';
}

/** Classifies an IP address (IPv4, or IPv6 including IPv4-mapped forms). */
export function addressKind(address: string): AddressKind {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare.split('%')[0] ?? '');
  if (family === 4) return kindOfIpv4(bare);
  if (family === 6) return kindOfIpv6(bare);
  throw new TypeError(`not an IP address: ${address}`);
}

/** Why an address of this kind is refused under `policy`, or undefined when it is allowed. */
export function addressRefusal(kind: AddressKind, policy: SourcePolicy): string | undefined {
  switch (kind) {
    case 'public':
      return undefined;
    case 'loopback':
      return policy.allowLoopback ? undefined : 'is a loopback address (allowed only in a local stack)';
    case 'private':
      return policy.allowPrivate
        ? undefined
        : 'is a private network address (off unless the stack allows private sources)';
    case 'metadata':
      return 'is the cloud metadata service';
    case 'link-local':
      return 'is a link-local address';
    case 'unspecified':
      return 'is the unspecified address';
    case 'reserved':
      return 'is a reserved or multicast address';
  }
}

/** True when `hostname` matches an allow-list entry (`host` exactly, or `*.suffix` for subdomains). */
export function hostAllowed(hostname: string, allowedHosts: readonly string[]): boolean {
  if (allowedHosts.length === 0) return true;
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return allowedHosts.some((entry) => {
    const rule = entry.toLowerCase().trim();
    return rule.startsWith('*.')
      ? host.endsWith(rule.slice(1)) && host.length > rule.length - 1
      : host === rule;
  });
}

/** One problem with a source URL; `message` is safe to show (no query string). */
export interface UrlProblem {
  readonly message: string;
}

/** Options of {@link urlProblems}. */
export interface UrlCheck {
  readonly policy: SourcePolicy;
  readonly lookup: HostLookup;
  /** The source sends a secret: https only, except on loopback in a local stack. */
  readonly credentialed: boolean;
  /**
   * Host names that do not resolve: `accept` when writing a source (DNS may not be ready yet; the
   * worker checks again at every request), `refuse` before a request.
   */
  readonly unresolved: 'accept' | 'refuse';
}

/** The IP literal of a URL's host, or undefined for a name. WHATWG URLs already canonicalize `2852039166`, `0xa9fea9fe`, `0251.0376.0251.0376`. */
function literalAddress(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? host : undefined;
}

/** Everything wrong with `raw` as a source URL under the check (empty when it may be used). */
export async function urlProblems(raw: string, check: UrlCheck): Promise<UrlProblem[]> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return [{ message: 'is not a valid URL' }];
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return [{ message: 'must be an http(s) URL' }];
  const problems: UrlProblem[] = [];
  if (!hostAllowed(url.hostname, check.policy.allowedHosts)) {
    problems.push({ message: `host ${url.hostname} is not in this stack's allowed source hosts` });
  }
  const literal = literalAddress(url);
  let addresses: string[];
  if (literal) addresses = [literal];
  else if (url.hostname.toLowerCase() === 'localhost' || url.hostname.toLowerCase().endsWith('.localhost'))
    addresses = ['127.0.0.1'];
  else {
    try {
      addresses = await check.lookup(url.hostname);
    } catch {
      addresses = [];
      if (check.unresolved === 'refuse') problems.push({ message: `host ${url.hostname} does not resolve` });
    }
  }
  const kinds = addresses.map(addressKind);
  for (const [i, kind] of kinds.entries()) {
    const refusal = addressRefusal(kind, check.policy);
    if (refusal) {
      const shown = literal ? url.hostname : `${url.hostname} (${addresses[i]})`;
      problems.push({ message: `host ${shown} ${refusal}` });
      break;
    }
  }
  if (check.credentialed && url.protocol === 'http:') {
    const loopbackOnly = kinds.length > 0 && kinds.every((kind) => kind === 'loopback');
    if (!(loopbackOnly && check.policy.allowLoopback)) {
      problems.push({
        message:
          'must use https:// because the source sends a secret (http:// only for loopback in a local stack)',
      });
    }
  }
  return problems;
}
