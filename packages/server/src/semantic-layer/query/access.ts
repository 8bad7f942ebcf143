import type { RawAccessPolicy, RawPolicyFilter } from '../../model/model-schema.js';
import { QueryError } from './errors.js';
import type { ModelIndex, ResolvedMember } from './members.js';
import { CUBE_OPERATORS, type Filter, type MemberFilter } from './query.js';

/**
 * Who is asking, as the server's proxy vouches for it (never from the request body): the user's
 * groups and attribute values, and the security context of the credential (a data-API token's
 * `security_context`, an embed session's).
 */
export interface SecurityContext {
  userId: number | null;
  groups: string[];
  userAttributes: Record<string, unknown>;
  securityContext: Record<string, unknown>;
}

export const NOBODY: SecurityContext = { userId: null, groups: [], userAttributes: {}, securityContext: {} };

const TEMPLATE = /\{\s*(securityContext|security_context|userAttributes|user_attributes)\.([A-Za-z0-9_.]+)\s*\}/g;
const WHOLE = /^\{\s*(securityContext|security_context|userAttributes|user_attributes)\.([A-Za-z0-9_.]+)\s*\}$/;

/** The value at a dotted path of an object (own properties only); undefined where there is none. */
export function valueAt(root: unknown, path: string): unknown {
  let at = root;
  for (const part of path.split('.')) {
    if (typeof at !== 'object' || at === null || Array.isArray(at) || !Object.prototype.hasOwnProperty.call(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** A value the caller's context holds at `path`; undefined when it holds none. */
function lookup(security: SecurityContext, source: string, path: string): unknown {
  return valueAt(source.startsWith('security') ? security.securityContext : security.userAttributes, path);
}

/** A policy value with its `{ securityContext.x }` and `{ userAttributes.y }` filled in; undefined when one is missing. */
function fill(value: unknown, security: SecurityContext): unknown[] | undefined {
  if (typeof value !== 'string') return [value];
  const whole = WHOLE.exec(value);
  if (whole) {
    const found = lookup(security, whole[1]!, whole[2]!);
    if (found === undefined || found === null) return undefined;
    return Array.isArray(found) ? found : [found];
  }
  let missing = false;
  const text = value.replace(TEMPLATE, (_, source: string, path: string) => {
    const found = lookup(security, source, path);
    if (found === undefined || found === null || typeof found === 'object') {
      missing = true;
      return '';
    }
    return String(found);
  });
  return missing ? undefined : [text];
}

/** The query's member filter for one policy filter; `false` when the caller's context lacks a value it needs (no rows). */
function policyFilter(owner: string, raw: RawPolicyFilter, security: SecurityContext): Filter | false {
  for (const group of ['and', 'or'] as const) {
    const list = raw[group];
    if (list) {
      const parts = list.map((f) => policyFilter(owner, f, security));
      if (group === 'and') return parts.includes(false) ? false : { and: parts as Filter[] };
      const kept = parts.filter((p): p is Filter => p !== false);
      return kept.length === 0 ? false : { or: kept };
    }
  }
  // The model language's operators are Cube's, with Cube's meaning (query.ts).
  const spelled = raw.operator ?? 'equals';
  const operator = Object.prototype.hasOwnProperty.call(CUBE_OPERATORS, spelled) ? CUBE_OPERATORS[spelled as keyof typeof CUBE_OPERATORS] : null;
  if (!raw.member || !operator)
    throw new QueryError(
      `An access policy of ${owner} has a filter the runtime cannot apply (${raw.operator ?? 'no member'}); the query is refused rather than run without it.`,
    );
  const member = raw.member.includes('.') ? raw.member : `${owner}.${raw.member}`;
  const values: unknown[] = [];
  for (const value of raw.values === undefined ? [] : Array.isArray(raw.values) ? raw.values : [raw.values]) {
    const filled = fill(value, security);
    if (filled === undefined) return false;
    values.push(...filled);
  }
  const filter: MemberFilter = { member, operator, spelled };
  if (operator !== 'is_null' && operator !== 'is_not_null') {
    if (values.length === 0) return false;
    // onTheDate names one day: from its start to its end.
    filter.value = spelled === 'onTheDate' && values.length === 1 ? [values[0], values[0]] : values;
  }
  return filter;
}

function groupsOf(policy: RawAccessPolicy): string[] {
  return [policy.group, policy.role, ...(policy.groups ?? [])].filter((g): g is string => typeof g === 'string');
}

export function matches(policy: RawAccessPolicy, security: SecurityContext): boolean {
  // A policy with conditions the runtime cannot evaluate grants nothing (never more than written).
  if (policy.conditions && policy.conditions.length > 0) return false;
  const groups = groupsOf(policy);
  return groups.length === 0 || groups.some((g) => g === '*' || security.groups.includes(g));
}

export function allows(policy: RawAccessPolicy, member: string): boolean {
  const level = policy.member_level;
  const masked = policy.member_masking;
  const listed = (selection: '*' | string[] | undefined) => selection === '*' || (selection ?? []).includes(member);
  if (masked && listed(masked.includes)) return false;
  if (!level) return true;
  const included = level.includes === undefined ? true : listed(level.includes);
  return included && !listed(level.excludes);
}

export interface AccessDecision {
  /** Filters every row must pass, added to the query where no client filter can undo them. */
  rowFilters: Filter[];
}

/**
 * Applies the model's `access_policy` entries to a query: for every cube and view the query
 * reads that has policies, the caller must match one (its group, or `*`), else 403 naming it;
 * every member it uses must be allowed by a matching policy's `member_level`, else 403 naming
 * the members; and the matching policies' `row_level` filters (one policy's filters all hold,
 * several policies' alternatives any) restrict the rows. A policy without `row_level`, or with
 * `allow_all`, lets every row through. Through a view, the view's policies and those of the
 * cubes behind its members all apply: access is never wider than either grants.
 */
export function applyAccess(index: ModelIndex, members: ResolvedMember[], security: SecurityContext, referenced: Iterable<string> = []): AccessDecision {
  const byOwner = new Map<string, { policies: RawAccessPolicy[]; names: Set<string> }>();
  const note = (owner: string, policies: RawAccessPolicy[] | undefined, name: string) => {
    if (!policies || policies.length === 0) return;
    const entry = byOwner.get(owner) ?? { policies, names: new Set() };
    entry.names.add(name);
    byOwner.set(owner, entry);
  };
  for (const m of members) {
    const owner = m.name.slice(0, m.name.indexOf('.'));
    const local = m.name.slice(owner.length + 1);
    const view = index.view(owner);
    if (view) note(owner, view.access_policy as RawAccessPolicy[] | undefined, local);
    note(m.cube, index.cube(m.cube).access_policy as RawAccessPolicy[] | undefined, m.member.name);
  }
  // Cubes the query reads only because a member's SQL refers to them (`{customers.region}` in a
  // dimension of orders): their rows are read, so their row-level policies hold too.
  for (const cube of referenced) {
    const policies = index.cube(cube).access_policy as RawAccessPolicy[] | undefined;
    if (policies && policies.length > 0 && !byOwner.has(cube)) byOwner.set(cube, { policies, names: new Set() });
  }
  const rowFilters: Filter[] = [];
  const hidden: string[] = [];
  for (const [owner, { policies, names }] of byOwner) {
    const matching = policies.filter((p) => matches(p, security));
    if (matching.length === 0) throw new QueryError(`You have no access to ${owner}: none of its access policies applies to your groups.`, 403);
    for (const name of names) if (!matching.some((p) => allows(p, name))) hidden.push(`${owner}.${name}`);
    if (matching.some((p) => !p.row_level || p.row_level.allow_all === true || (p.row_level.filters ?? []).length === 0)) continue;
    const alternatives: Filter[] = [];
    for (const p of matching) {
      const parts = (p.row_level!.filters ?? []).map((f) => policyFilter(owner, f, security));
      if (parts.includes(false)) continue;
      alternatives.push(parts.length === 1 ? (parts[0] as Filter) : { and: parts as Filter[] });
    }
    // No policy's filters can hold for this caller: no rows, rather than an error that tells why.
    rowFilters.push(alternatives.length === 0 ? NO_ROWS : alternatives.length === 1 ? alternatives[0]! : { or: alternatives });
  }
  if (hidden.length > 0)
    throw new QueryError(
      `You may not query ${[...new Set(hidden)].join(', ')}: the access policies that apply to you exclude ${hidden.length === 1 ? 'it' : 'them'}.`,
      403,
    );
  return { rowFilters };
}

/** A filter no row passes. */
const NO_ROWS: Filter = { member: '__none__', operator: 'custom' };
export const isNoRows = (f: Filter) => f === NO_ROWS;
