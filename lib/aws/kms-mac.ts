import {
  AlreadyExistsException,
  CreateAliasCommand,
  CreateKeyCommand,
  DescribeKeyCommand,
  GenerateMacCommand,
  type KMSClient,
  KMSInvalidMacException,
  NotFoundException,
  VerifyMacCommand,
} from '@aws-sdk/client-kms';

/**
 * KMS HMAC keys (`GenerateMac` / `VerifyMac`). The key never leaves KMS; IAM decides who may
 * generate a MAC (the API role) and who may only verify one (the workers), which is what makes a
 * MAC here a signature only the API can make.
 */

/** Makes and checks MACs over short messages. */
export interface MacKey {
  /** The MAC of `message`, base64. */
  generate(message: string): Promise<string>;
  /** True when `mac` is `message`'s MAC under this key; false for any other MAC. */
  verify(message: string, mac: string): Promise<boolean>;
}

/** The HMAC algorithm of Harvester's key (`HMAC_256` key spec). */
export const MAC_ALGORITHM = 'HMAC_SHA_256';

/**
 * The HMAC key `keyId` (an id, ARN or `alias/…`) as a {@link MacKey}. Messages are UTF-8 and
 * must stay under KMS's 4096-byte limit (callers MAC a digest, not a document).
 */
export function kmsMacKey(kms: KMSClient, keyId: string): MacKey {
  return {
    async generate(text) {
      const { Mac } = await kms.send(
        new GenerateMacCommand({
          KeyId: keyId,
          MacAlgorithm: MAC_ALGORITHM,
          Message: Buffer.from(text, 'utf8'),
        }),
      );
      return Buffer.from(Mac ?? new Uint8Array()).toString('base64');
    },
    async verify(text, mac) {
      try {
        const { MacValid } = await kms.send(
          new VerifyMacCommand({
            KeyId: keyId,
            MacAlgorithm: MAC_ALGORITHM,
            Message: Buffer.from(text, 'utf8'),
            Mac: Buffer.from(mac, 'base64'),
          }),
        );
        return MacValid === true;
      } catch (error) {
        if (error instanceof KMSInvalidMacException) return false;
        throw error;
      }
    },
  };
}

/**
 * Creates (or finds, by alias) an HMAC key in an emulator or a trial account: the local stand-in
 * for the stack's key. Returns the alias.
 */
export async function ensureMacKey(kms: KMSClient, alias: string): Promise<string> {
  try {
    await kms.send(new DescribeKeyCommand({ KeyId: alias }));
    return alias;
  } catch (error) {
    if (!(error instanceof NotFoundException)) throw error;
  }
  const { KeyMetadata } = await kms.send(
    new CreateKeyCommand({
      KeySpec: 'HMAC_256',
      KeyUsage: 'GENERATE_VERIFY_MAC',
      Description: 'Harvester: MACs of source configs and secret bindings (local)',
    }),
  );
  try {
    await kms.send(new CreateAliasCommand({ AliasName: alias, TargetKeyId: KeyMetadata?.KeyId }));
  } catch (error) {
    // Two processes bootstrapping at once: the other one's alias stands.
    if (!(error instanceof AlreadyExistsException)) throw error;
  }
  return alias;
}
