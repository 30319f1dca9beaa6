import { CliUsageError } from './errors.js';

/** Where an API URL came from, as the user would type it again. */
export type ApiUrlOrigin = '--endpoint' | '--api-url' | 'HARVESTER_API_URL';

function spelled(origin: ApiUrlOrigin, url: string): string {
  return origin === 'HARVESTER_API_URL' ? `HARVESTER_API_URL=${url}` : `${origin} ${url}`;
}

/**
 * Refuses an API URL a request could not use, naming where it came from and the likely fix:
 * `127.0.0.1:8787` has no scheme (`new URL` reads `localhost:` as one and fails much later),
 * an execute-api host without `https://`, a string that is no URL at all.
 */
export function checkApiUrl(value: string, origin: ApiUrlOrigin): URL {
  if (!/^https?:\/\//i.test(value)) {
    const guess = /amazonaws\.com/i.test(value) ? `https://${value}` : `http://${value}`;
    throw new CliUsageError(
      `${origin} "${value}" has no scheme; did you mean ${spelled(origin, guess)}? (http:// for harvester local, https:// for a deployed API)`,
    );
  }
  try {
    return new URL(value);
  } catch {
    throw new CliUsageError(
      `${origin} "${value}" is not a URL; e.g. ${spelled(origin, 'http://127.0.0.1:8787')}`,
    );
  }
}
