import { Type } from 'typebox';
import { ApiError } from './problems.js';
import { PageOf, type PageInfo } from './schemas.js';

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

/*
 * The deprecated fields some lists keep beside `items` and `pageInfo` (spec: Other operations;
 * reference shapes, 0.3). One schema builder and one response builder, so every list that keeps
 * them says the same thing: `data` is the page again, `count` the total ignoring pagination,
 * `totalCount` its alias, and, where a list has it, `pagination` {total, offset, limit}.
 */

export interface LegacyPagination {
  total: number;
  offset: number;
  limit: number;
}

export interface LegacyPage<T> {
  items: T[];
  pageInfo: PageInfo;
  data: T[];
  count: number;
  totalCount: number;
}

/**
 * The schema `<item>Page` (or `id`): a cursor page of the shared schema `item` with the deprecated
 * fields, and `pagination` when `withPagination`.
 */
export function LegacyPageOf(item: string, { id = `${item}Page`, withPagination = false } = {}) {
  const total = (description: string) => Type.Integer({ minimum: 0, deprecated: true, description });
  const pagination = Type.Object(
    { total: Type.Integer({ minimum: 0 }), offset: Type.Integer({ minimum: 0 }), limit: Type.Integer({ minimum: 0 }) },
    {
      deprecated: true,
      description: 'Deprecated: use `pageInfo`. `total` is `count`; `offset` is how many items come before this page; `limit` is the page size asked for.',
    },
  );
  return Type.Object(
    {
      ...PageOf(item).properties,
      data: Type.Array(Type.Ref(item), { deprecated: true, description: 'Deprecated: the same array as `items`.' }),
      count: total('Deprecated: how many items the whole list holds, ignoring pagination.'),
      totalCount: total('Deprecated: the same as `count`.'),
      ...(withPagination ? { pagination } : {}),
    },
    { $id: id },
  );
}

/** A page with the deprecated fields; `window` adds `pagination` for the lists that have it. */
export function legacyPage<T>(page: { items: T[]; pageInfo: PageInfo }, total: number): LegacyPage<T>;
export function legacyPage<T>(
  page: { items: T[]; pageInfo: PageInfo },
  total: number,
  window: Omit<LegacyPagination, 'total'>,
): LegacyPage<T> & { pagination: LegacyPagination };
export function legacyPage<T>(page: { items: T[]; pageInfo: PageInfo }, total: number, window?: Omit<LegacyPagination, 'total'>) {
  const legacy: LegacyPage<T> = { items: page.items, pageInfo: page.pageInfo, data: page.items, count: total, totalCount: total };
  return window ? { ...legacy, pagination: { total, ...window } } : legacy;
}

/** The query of a list that keeps the deprecated `offset`/`limit` (schemas.ts `LegacyPageQuery`). */
export interface LegacyPageInput {
  first?: number | undefined;
  after?: string | undefined;
  offset?: number | undefined;
  limit?: number | undefined;
}

/**
 * How every list with the deprecated `offset`/`limit` reads them (docs/api/pagination.md):
 * `offset` and `after` both say where a page starts, so sending both is 400 rather than one
 * silently winning; `limit`, when sent, is the page size (it wins over `first`, which has a
 * default). Answers the page request and the number of items to skip.
 */
export function offsetPaging(input: LegacyPageInput): { page: PageRequest; offset: number } {
  if (input.offset !== undefined && input.after !== undefined) {
    throw new ApiError(
      'VALIDATION_FAILED',
      '`offset` and `after` both say where the page starts: send `after` (the previous page’s `pageInfo.endCursor`) or the deprecated `offset`, not both.',
      { errors: [{ pointer: '/query/offset', message: 'cannot be combined with after' }] },
    );
  }
  return { page: pageRequest({ first: input.limit ?? input.first, after: input.after }), offset: input.offset ?? 0 };
}

/**
 * Pages by position: for short lists computed in memory, and for the deprecated `offset`/`limit`
 * some lists keep (read by `offsetPaging`). The cursor is the position after the last item served.
 */
export function positionalWindow(input: LegacyPageInput): { start: number; size: number } {
  const { page, offset } = offsetPaging(input);
  if (page.after === undefined) return { start: offset, size: page.first };
  const [at] = decodeCursor(page.after, 1);
  if (typeof at !== 'number' || !Number.isSafeInteger(at) || at < 0) throw invalidCursor();
  return { start: at, size: page.first };
}

/** The page info of `count` items served from position `start` of `total`. */
export function positionalPageInfo(start: number, count: number, total: number): PageInfo {
  return {
    startCursor: count > 0 ? encodeCursor([start]) : null,
    endCursor: count > 0 ? encodeCursor([start + count]) : null,
    hasNextPage: start + count < total,
    hasPreviousPage: start > 0,
  };
}

/** A page of an in-memory list. */
export function positionalPage<T>(all: readonly T[], window: { start: number; size: number }): { items: T[]; pageInfo: PageInfo } {
  const items = all.slice(window.start, window.start + window.size);
  return { items, pageInfo: positionalPageInfo(window.start, items.length, all.length) };
}
