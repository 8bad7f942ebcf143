import { randomBytes } from 'node:crypto';

/**
 * `bytes` random bytes as base64url, never starting with `-`: ids are typed as command-line
 * arguments (`mapi dashboards export-status 3 <jobId>`), where a leading dash reads as an option
 * (one id in 64 would otherwise start with one).
 */
export function randomId(bytes: number): string {
  for (;;) {
    const id = randomBytes(bytes).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}
