import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CursorSigner, randomCursorKey } from '../../lib/api/cursors.js';
import { InvalidCursorError } from '../../lib/store/paging.js';

const signer = new CursorSigner(randomCursorKey());
const storeCursor = Buffer.from(JSON.stringify({ sourceId: 'acme', runId: '01J' })).toString('base64url');

describe('signed pagination cursors', () => {
  it('open what they sealed, for the same listing', async () => {
    const sealed = await signer.seal('runs:acme', storeCursor);
    expect(sealed).toMatch(/^v1\./);
    expect(await signer.open('runs:acme', sealed!)).toBe(storeCursor);
  });

  it('seal the end of a listing as null and open no cursor as none', async () => {
    expect(await signer.seal('sources', undefined)).toBeNull();
    expect(await signer.open('sources', undefined)).toBeUndefined();
  });

  it('refuse a cursor of another listing', async () => {
    const sealed = await signer.seal('runs:acme', storeCursor);
    await expect(signer.open('runs:other', sealed!)).rejects.toBeInstanceOf(InvalidCursorError);
  });

  it('refuse a cursor signed with another stack key', async () => {
    const sealed = await new CursorSigner(randomCursorKey()).seal('sources', storeCursor);
    await expect(signer.open('sources', sealed!)).rejects.toBeInstanceOf(InvalidCursorError);
  });

  it('refuse an unsigned raw key (the old cursor format)', async () => {
    await expect(signer.open('sources', storeCursor)).rejects.toBeInstanceOf(InvalidCursorError);
  });

  it('refuse a change of the last character, whose low bits base64 decoding ignores', async () => {
    const sealed = (await signer.seal('sources', storeCursor))!;
    const last = sealed.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = alphabet[alphabet.indexOf(last) ^ 1]!;
    await expect(signer.open('sources', sealed.slice(0, -1) + sibling)).rejects.toBeInstanceOf(
      InvalidCursorError,
    );
  });

  it('refuse every single-character change', async () => {
    const sealed = (await signer.seal('sources', storeCursor))!;
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: sealed.length - 1 }),
        fc.constantFrom(...'ABCabc019-_.'),
        async (index, char) => {
          fc.pre(sealed[index] !== char);
          const tampered = sealed.slice(0, index) + char + sealed.slice(index + 1);
          await expect(signer.open('sources', tampered)).rejects.toBeInstanceOf(InvalidCursorError);
        },
      ),
      { numRuns: 200 },
    );
  });
});
