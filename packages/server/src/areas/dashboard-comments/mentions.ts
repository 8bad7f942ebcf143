/**
 * Mentions in a comment's body: `@username`, at the start or after white space or an opening
 * bracket, up to the next white space, without the punctuation that ends a sentence or a
 * parenthesis (`@ann,` and `(@ann)` mention `ann`); `@{user name}` for a username with spaces or
 * trailing punctuation. Usernames are compared lowercase, as they are stored. Only the users the
 * caller may mention (their own embed tenant's) count, which the service checks.
 */

/** At most this many distinct names are looked up per comment: a body of 10,000 `@a` is not 5,000 lookups. */
export const MENTIONS_MAX = 50;

const MENTION = /(?:^|(?<=[\s([{]))@(?:\{([^{}\r\n]{1,255})\}|(\S{1,255}))/gu;
const TRAILING = /[.,;:!?)\]}'"»”’]+$/u;

/** The distinct usernames a body mentions, lowercased, in order of first appearance. */
export function mentionedNames(body: string): string[] {
  const names = new Set<string>();
  for (const match of body.matchAll(MENTION)) {
    const name = (match[1] ?? match[2]?.replace(TRAILING, '') ?? '').trim().toLowerCase();
    if (name.length > 0) names.add(name);
    if (names.size === MENTIONS_MAX) break;
  }
  return [...names];
}
