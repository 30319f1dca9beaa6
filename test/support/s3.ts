import {
  CreateBucketCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';

/** Creates a bucket on the emulator (names must be unique per test file: use the file's prefix). */
export async function createBucket(client: S3Client, bucket: string): Promise<void> {
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
}

/** Puts an object: a string body as is, anything else as JSON. */
export async function putObject(client: S3Client, bucket: string, key: string, body: unknown): Promise<void> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  await client.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: text,
      ContentType: typeof body === 'string' ? 'text/plain' : 'application/json',
    }),
  );
}

/** Deletes an object. */
export async function deleteObject(client: S3Client, bucket: string, key: string): Promise<void> {
  await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
}

/** `data/0001.json` … : zero-padded keys, so key order is number order. */
export function objectKey(prefix: string, n: number, suffix = '.json'): string {
  return `${prefix}${String(n).padStart(4, '0')}${suffix}`;
}
