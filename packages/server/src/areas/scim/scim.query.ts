import { invalidSyntax, invalidValue } from './scim.errors.js';
import type { ListParams } from './scim.service.js';

/**
 * The query of a SCIM list, from a URL's query string (GET, RFC 7644 section 3.4.2) or from a
 * SearchRequest body (POST …/.search, section 3.4.3): the same parameters, so both give the same
 * ListResponse.
 */
export const SEARCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

const splitList = (value: string) =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');

export const attributeList = (value: string | undefined) => (value === undefined ? undefined : splitList(value));

function sortOrderOf(raw: unknown): ListParams['sortOrder'] {
  if (raw === undefined) return undefined;
  // Identity providers write "Descending" as often as "descending".
  const order = typeof raw === 'string' ? raw.toLowerCase() : raw;
  if (order !== 'ascending' && order !== 'descending') {
    throw invalidValue('sortOrder must be "ascending" or "descending" (RFC 7644 section 3.4.2.3).');
  }
  return order;
}

/** From the query string, already typed by the route's schema. */
export function queryParams(query: Record<string, unknown>): ListParams {
  return {
    filter: query.filter as string | undefined,
    startIndex: query.startIndex as number | undefined,
    count: query.count as number | undefined,
    sortBy: query.sortBy as string | undefined,
    sortOrder: sortOrderOf(query.sortOrder),
    attributes: attributeList(query.attributes as string | undefined),
    excludedAttributes: attributeList(query.excludedAttributes as string | undefined),
  };
}

/** The longest sortBy accepted, as in the query string's schema. */
const MAX_SORT_BY = 256;

/**
 * From a SearchRequest body. Member names are matched ignoring case, as attribute names are
 * (RFC 7643 section 2.1); `attributes` and `excludedAttributes` are lists of strings (a
 * comma-separated string is read as the query string's form). Other members are ignored.
 */
export function searchParams(body: unknown): ListParams {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalidSyntax('A search body must be a SearchRequest object (RFC 7644 section 3.4.3).');
  // A Map, not an object: member names are the client's, "__proto__" and "constructor" included.
  const members = new Map(Object.entries(body).map(([k, v]) => [k.toLowerCase(), v as unknown]));
  const schemas = members.get('schemas');
  if (schemas !== undefined && !(Array.isArray(schemas) && schemas.includes(SEARCH_SCHEMA))) {
    throw invalidSyntax(`A SearchRequest's "schemas" must contain "${SEARCH_SCHEMA}".`);
  }
  const text = (name: string, max?: number): string | undefined => {
    const v = members.get(name.toLowerCase());
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw invalidValue(`"${name}" must be a string.`);
    if (max !== undefined && v.length > max) throw invalidValue(`"${name}" may have at most ${max} characters.`);
    return v;
  };
  const integer = (name: string): number | undefined => {
    const v = members.get(name.toLowerCase());
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) throw invalidValue(`"${name}" must be an integer.`);
    return v;
  };
  const list = (name: string): string[] | undefined => {
    const v = members.get(name.toLowerCase());
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return splitList(v);
    if (!Array.isArray(v) || !v.every((item) => typeof item === 'string')) throw invalidValue(`"${name}" must be a list of attribute names.`);
    return v.map((item: string) => item.trim()).filter((item) => item !== '');
  };
  return {
    filter: text('filter'),
    startIndex: integer('startIndex'),
    count: integer('count'),
    sortBy: text('sortBy', MAX_SORT_BY),
    sortOrder: sortOrderOf(text('sortOrder')),
    attributes: list('attributes'),
    excludedAttributes: list('excludedAttributes'),
  };
}
