import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { InvalidCursorError } from '../store/paging.js';

/**
 * Pagination cursors the API hands out are signed: `v1.<store cursor>.<HMAC-SHA256>`, the MAC
 * over the listing the cursor belongs to (its route and filters) and the store's own cursor, with
 * a key per stack. A cursor edited by hand, forged, or taken from another listing fails the check
 * and answers 400 before any table is queried, so a caller can never steer a query's start key.
 *
 * The key: on AWS, a Secrets Manager secret the stack generates (`CURSOR_KEY_SECRET_ARN`, read
 * once per Lambda instance); locally `HARVESTER_CURSOR_KEY`, or else a random key per process
 * (cursors then do not survive a restart of `harvester local`, which only costs a new listing).
 */

const VERSION = 'v1';

/** Where the signing key comes from; called once, the result kept. */
export type CursorKeySource = () => Promise<Uint8Array>;

/** A random key for one process: the local default. */
export function randomCursorKey(): CursorKeySource {
  const key = randomBytes(32);
  return async () => key;
}

/** Seals store cursors for clients and opens the ones they send back. */
export class CursorSigner {
  private key: Promise<Uint8Array> | undefined;

  constructor(private readonly source: CursorKeySource) {}

  /**
   * The signed cursor for a store cursor of `listing`, or null at the end of a listing.
   *
   * @example
   * await signer.seal('runs:acme', page.cursor); // 'v1.eyJ…'
   */
  async seal(listing: string, cursor: string | undefined): Promise<string | null> {
    if (cursor === undefined) return null;
    return `${VERSION}.${cursor}.${await this.mac(listing, cursor)}`;
  }

  /** The store cursor inside a signed one; {@link InvalidCursorError} when absent of a valid MAC. */
  async open(listing: string, signed: string | undefined): Promise<string | undefined> {
    if (signed === undefined) return undefined;
    const parts = signed.split('.');
    if (parts.length !== 3 || parts[0] !== VERSION || !/^[A-Za-z0-9_-]+$/.test(parts[1]!))
      throw new InvalidCursorError('the pagination cursor is not one this API issued');
    const [, cursor, mac] = parts as [string, string, string];
    // Compared as text: decoding first would accept variants of the last base64 character.
    const expected = Buffer.from(await this.mac(listing, cursor), 'utf8');
    const given = Buffer.from(mac, 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new InvalidCursorError(
        'the pagination cursor was altered or belongs to another listing; start the listing again without it',
      );
    return cursor;
  }

  private async mac(listing: string, cursor: string): Promise<string> {
    this.key ??= this.source().catch((error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return createHmac('sha256', await this.key)
      .update(`${listing}\n${cursor}`)
      .digest('base64url');
  }
}
