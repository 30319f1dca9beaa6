import { describe, expect, it } from 'vitest';
import type { ConnectorContext } from '../../lib/connectors/contract.js';
import {
  githubIssuesConnector as github,
  githubIssuesConfigSchema,
} from '../../lib/connectors/github-issues/index.js';
import {
  gitlabIssuesConnector as gitlab,
  gitlabIssuesConfigSchema,
} from '../../lib/connectors/gitlab-issues/index.js';
import { EntityGoneError, isGone } from '../../lib/connectors/gone.js';

/** A context whose fetch answers every request with `body` (after `redirect`, when given). */
function answering(body: unknown, redirect?: string): ConnectorContext {
  const fetchFn = (async (input: unknown) => {
    if (redirect && !String(input).includes(redirect)) {
      return new Response(null, { status: 301, headers: { location: redirect } });
    }
    return Response.json(body);
  }) as typeof fetch;
  return { fetch: fetchFn, secrets: async () => 'token', since: null };
}

const GH = 'https://api.github.com';
const ghConfig = githubIssuesConfigSchema.parse({ owner: 'Octo', repo: 'Rec' });
const ghIssue = (number: number, repository = 'octo/rec') => ({
  number,
  repository_url: `${GH}/repos/${repository}`,
  updated_at: '2024-05-01T10:00:00Z',
});

describe('github-issues fetchItem answers only for the issue asked for', () => {
  it('returns the issue of the configured repository (names compared case-insensitively)', async () => {
    await expect(github.fetchItem(ghConfig, '42', answering(ghIssue(42)))).resolves.toEqual(ghIssue(42));
  });

  it.each([
    ['another number in another repository (a transfer)', ghIssue(7, 'elsewhere/moved')],
    ['the same number in another repository', ghIssue(42, 'elsewhere/moved')],
    ['another number in the same repository', ghIssue(7)],
  ])('says the issue is gone when GitHub answers with %s', async (_case, body) => {
    const ctx = answering(body, `${GH}/repositories/9/issues/7`);
    const error = await github.fetchItem(ghConfig, '42', ctx).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(EntityGoneError);
    expect(isGone(error)).toBe(true);
    expect((error as Error).message).toContain(
      `GitHub answered with ${body.repository_url.slice(GH.length + 7)}#${body.number}`,
    );
  });
});

const GL = 'https://gitlab.example.com/api/v4';
const glIssue = (iid: number, project: { id: number; path: string }) => ({
  iid,
  project_id: project.id,
  references: { short: `#${iid}`, full: `${project.path}#${iid}` },
  updated_at: '2024-05-01T10:00:00.123Z',
});
const HOME = { id: 42, path: 'Group/Project' };
const OTHER = { id: 77, path: 'other/place' };

describe('gitlab-issues fetchItem answers only for the issue asked for', () => {
  it.each([
    ['by path', 'group/project'],
    ['by id', 42],
  ])('returns the issue of the configured project (named %s)', async (_case, project) => {
    const config = gitlabIssuesConfigSchema.parse({ project, baseUrl: GL });
    await expect(gitlab.fetchItem(config, '5', answering(glIssue(5, HOME)))).resolves.toEqual(
      glIssue(5, HOME),
    );
  });

  it.each([
    ['by path', 'group/project', glIssue(5, OTHER)],
    ['by id', 42, glIssue(5, OTHER)],
    ['by path', 'group/project', glIssue(6, HOME)],
  ])(
    'says the issue is gone when GitLab answers with another project’s or iid’s issue (project named %s)',
    async (_case, project, body) => {
      const config = gitlabIssuesConfigSchema.parse({ project, baseUrl: GL });
      const error = await gitlab.fetchItem(config, '5', answering(body)).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(EntityGoneError);
      expect((error as Error).message).toContain('GitLab answered with');
    },
  );
});
