import { z } from 'zod';
import { resolveLimits, type SourceLimits, sourceLimitsSchema } from '../limits.js';
import { watermarkLookbackSeconds } from '../source-timing.js';

// GitHub's own rules: owners are alphanumerics and single hyphens, repositories add `.` and `_`.
// Checked here so a typo fails at configuration time, not as a 404 in the middle of a run.
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const REPO = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * Config of the `github-issues` connector (validated when a source is created or changed).
 *
 * @example
 * { owner: 'nodejs', repo: 'node', tokenRef: '/harvester/github-token', perPage: 100 }
 */
export const githubIssuesConfigSchema = z
  .strictObject({
    owner: z
      .string()
      .regex(OWNER, 'must be a GitHub user or organization name')
      .meta({ description: 'The user or organization owning the repository.' }),
    repo: z
      .string()
      .regex(REPO, 'must be a GitHub repository name')
      .refine((name) => name !== '.' && name !== '..', 'must be a GitHub repository name')
      .meta({ description: 'The repository name, without the owner.' }),
    baseUrl: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
      .default('https://api.github.com')
      .transform((url) => url.replace(/\/+$/, ''))
      .meta({
        description:
          'The REST API root. Default `https://api.github.com`; GitHub Enterprise Server uses `https://HOST/api/v3`. A trailing slash is dropped. Pagination links are only followed on this origin.',
      }),
    tokenRef: z.string().min(1, 'must not be empty').optional().meta({
      description:
        'A secret reference (SSM parameter or Secrets Manager name) holding a token, sent as `Authorization: Bearer …`. Optional: public repositories work without one, at 60 requests an hour.',
    }),
    perPage: z.number().int('must be a whole number').min(1).max(100).default(100).meta({
      description:
        "Issues per page, 1–100 (GitHub's maximum). Default 100: fewer requests against the rate limit.",
    }),
    includePullRequests: z.boolean().default(true).meta({
      description:
        "Whether pull requests are harvested too. Default true: GitHub's issues endpoint returns pull requests as issues (with a `pull_request` field), and they carry the same discussion data. When false they are filtered out of each page before normalization, so they are neither stored nor counted as failures.",
    }),
    watermarkLookbackSeconds: watermarkLookbackSeconds.meta({
      description:
        "Seconds before the watermark an incremental run asks from; default the stack's (5), at most 86,400.",
    }),
    limits: sourceLimitsSchema.optional().meta({
      description:
        'What the source may send (see docs/limits.md): body bytes, records a page, next-URL length.',
    }),
  })
  .meta({
    examples: [
      {
        owner: 'nodejs',
        repo: 'node',
        tokenRef: 'ssm:/harvester/node-issues/github-token',
        perPage: 100,
        includePullRequests: false,
      },
    ],
  });

/** The parsed config, defaults applied. */
export type GithubIssuesConfig = z.output<typeof githubIssuesConfigSchema>;

/** The limits in force for a source (records a page: 4 × `perPage` unless configured). */
export function limitsOf(config: GithubIssuesConfig): SourceLimits {
  return resolveLimits(config.limits, config.perPage);
}
