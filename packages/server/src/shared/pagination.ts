import { ApiError } from './problems.js';
import type { PageInfo } from './schemas.js';

/*
 * Keyset pagination. A cursor is opaque to clients: base64url of the sort key of the last item
 * served, so a page never skips or repeats rows when others are inserted meanwhile. Ordering
 * always ends on the unique id, which makes the key total.
 */

export interface PageRequest {
  first: number;
  after: string | undefined;
}

export const DEFAULT_PAGE_SIZE = 100;

/** The page a list query asks for, with the default size filled in. */
export function pageRequest(query: { first?: number | undefined; after?: string | undefined }): PageRequest {
  return { first: query.first ?? DEFAULT_PAGE_SIZE, after: query.after };
}

export function encodeCursor(key: unknown[]): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, arity: number): unknown[] {
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(key) && key.length === arity) return key;
  } catch {
    // falls through to the error below
  }
  throw invalidCursor();
}

function invalidCursor(): ApiError {
  return new ApiError('INVALID_CURSOR', 'The `after` cursor was not issued by this list; pass `pageInfo.endCursor` of the previous page.', {
    errors: [{ pointer: '/query/after', message: 'is not a cursor of this list' }],
  });
}

/** Decodes an id-only cursor (lists ordered by id). */
export function afterId(page: PageRequest): number | undefined {
  if (page.after === undefined) return undefined;
  const [id] = decodeCursor(page.after, 1);
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw invalidCursor();
  return id;
}

/**
 * Builds a page from rows fetched with `limit first + 1`: the extra row only tells whether
 * another page follows.
 */
export function toPage<T>(rows: T[], page: PageRequest, keyOf: (row: T) => unknown[]): { items: T[]; pageInfo: PageInfo } {
  const items = rows.slice(0, page.first);
  const first = items[0];
  const last = items[items.length - 1];
  return {
    items,
    pageInfo: {
      startCursor: first === undefined ? null : encodeCursor(keyOf(first)),
      endCursor: last === undefined ? null : encodeCursor(keyOf(last)),
      hasNextPage: rows.length > page.first,
      hasPreviousPage: page.after !== undefined,
    },
  };
}
