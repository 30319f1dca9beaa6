import { z } from 'zod';

// S3's bucket naming rules (general purpose buckets): 3–63 characters, lowercase letters, digits,
// dots and hyphens, starting and ending with a letter or digit. Checked here so a typo fails when
// the source is written, not as NoSuchBucket in the middle of a run.
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/** Largest body read for `jsonBodies`: an item must stay well below DynamoDB's 400 KB item limit. */
export const MAX_JSON_BODY_BYTES = 256 * 1_024;

/**
 * Config of the `s3-objects` connector (validated when a source is created or changed).
 *
 * @example
 * { bucket: 'acme-exports', prefix: 'orders/', jsonBodies: { maxBytes: 65536 } }
 */
export const s3ObjectsConfigSchema = z
  .strictObject({
    bucket: z
      .string()
      .regex(BUCKET, 'must be an S3 bucket name (3–63 lowercase letters, digits, dots and hyphens)')
      .refine((name) => !name.includes('..'), 'must be an S3 bucket name (no two adjacent dots)')
      .meta({
        description:
          "The bucket. The worker's role may only read the buckets the stack allows (`sourceBuckets`).",
      }),
    prefix: z.string().max(1_024).default('').meta({
      description: 'Only keys starting with this prefix are entities (`orders/`). Default: the whole bucket.',
    }),
    region: z
      .string()
      .regex(REGION, 'must be an AWS region such as eu-west-1')
      .optional()
      .meta({ description: "The bucket's region when it is not the stack's. Default: the stack's region." }),
    pageSize: z
      .number()
      .int('must be a whole number')
      .min(1)
      .max(1_000)
      .default(1_000)
      .meta({ description: "Keys listed per page (`MaxKeys`), 1–1000. Default 1000, S3's own maximum." }),
    jsonBodies: z
      .strictObject({
        maxBytes: z
          .number()
          .int('must be a whole number')
          .min(1)
          .max(MAX_JSON_BODY_BYTES)
          .default(65_536)
          .meta({
            description:
              'Largest object whose body is read, in bytes. Default 65,536 (64 KiB), at most 262,144.',
          }),
        suffix: z
          .string()
          .max(64)
          .default('.json')
          .meta({ description: 'Key suffix of the objects whose body is read. Default `.json`.' }),
      })
      .optional()
      .meta({
        description:
          'Also store the body of small JSON objects (parsed, under `data.body`). Objects whose key ends in `suffix` (default `.json`) and whose size is at most `maxBytes` (default 64 KiB, at most 256 KiB) are read with GetObject; other objects keep metadata only. A body that is not JSON is an invalid record (a dead letter naming the key). Default: metadata only, no GetObject at all.',
      }),
    clockSkewMarginSeconds: z.number().int('must be a whole number').min(0).max(86_400).default(900).meta({
      description:
        "Seconds subtracted from the listing's start to make the watermark (see the module docs): covers clock skew between Harvester and S3 and uploads that began before the listing (S3 stamps a multipart upload with its start). 0–86400, default 900 (15 minutes).",
    }),
  })
  .meta({ examples: [{ bucket: 'acme-exports', prefix: 'orders/', jsonBodies: { maxBytes: 65536 } }] });

/** The parsed config, defaults applied. */
export type S3ObjectsConfig = z.output<typeof s3ObjectsConfigSchema>;
