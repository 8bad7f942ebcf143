import { cubeSubject } from './describe.js';
import type { RawCube } from './model-schema.js';
import type { Path } from './parse.js';
import type { Report } from './report.js';
import { didYouMean } from './suggest.js';
import { intact, type EntitySymbol, type MemberSymbol, type Model } from './symbols.js';

/** `{orders.total}` as written in an SQL expression, and its dotted parts. */
export interface Reference {
  text: string;
  segments: string[];
}

const BRACED = /\{([^{}]*)\}/g;
const DOTTED = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
/**
 * Context variables: filter values, the caller's security context and helpers the runtime
 * fills in when it compiles a query. They are not members, so they are not resolved here.
 */
const CONTEXT_VARIABLES = new Set([
  'FILTER_PARAMS',
  'FILTER_GROUP',
  'SECURITY_CONTEXT',
  'COMPILE_CONTEXT',
  'SQL_UTILS',
  'securityContext',
  'security_context',
  'userAttributes',
  'user_attributes',
]);

/**
 * The member references of an SQL expression. Only `{a}` and `{a.b.c}` are references; anything
 * else in braces (a JSON or array literal, a call on a context variable) is SQL and is left alone.
 */
export function referencesIn(sql: string): Reference[] {
  if (!sql.includes('{')) return [];
  const found: Reference[] = [];
  for (const match of sql.matchAll(BRACED)) {
    const inner = match[1]!.trim();
    if (!DOTTED.test(inner)) continue;
    const segments = inner.split('.');
    if (!CONTEXT_VARIABLES.has(segments[0]!)) found.push({ text: match[0], segments });
  }
  return found;
}

/** What a reference names: a member (read in `entity`'s context), a table or something not checked here, or a problem. */
export type Resolution = { member: MemberSymbol; entity: EntitySymbol } | { table: true } | { problem: string; hint: string };

const UNCHECKED: Resolution = { table: true };

/** A member of an entity by name: its own or inherited, or, in a view, one it exposes from a cube. */
export function memberOf(entity: EntitySymbol, name: string): { member: MemberSymbol; entity: EntitySymbol } | undefined {
  const member = entity.members.get(name);
  if (member) return { member, entity };
  const exposed = entity.exposed.get(name);
  return exposed && { member: exposed.member, entity: exposed.entity };
}

function unknownCube(model: Model, name: string): Resolution {
  if (model.openWorld) return UNCHECKED;
  return { problem: `refers to unknown cube "${name}"`, hint: didYouMean(name, model.byName.keys()) };
}

function unknownMember(owner: EntitySymbol, name: string): Resolution {
  if (owner.opaque || owner.incomplete) return UNCHECKED;
  return {
    problem: `refers to unknown member "${name}" of ${owner.kind} "${owner.name}"`,
    hint: didYouMean(name, [...owner.members.keys(), ...owner.exposed.keys()]),
  };
}

/**
 * Resolves `{member}`, `{CUBE.member}`, `{cube.member}`, `{cube.joined.member}` and, on time
 * dimensions, `{member.granularity}` and `{cube.member.granularity}`, from `scope`'s point of
 * view (`CUBE` is scope). `{CUBE}` and `{cube}` name tables. With `asMember`, a bare name must be
 * a member (lists of members, not SQL).
 */
export function resolve(model: Model, scope: EntitySymbol, segments: string[], asMember = false): Resolution {
  const named = (name: string) => (name === 'CUBE' ? scope : model.byName.get(name));
  const n = segments.length;
  const last = segments[n - 1]!;
  if (n === 1) {
    const own = memberOf(scope, last);
    if (own) return own;
    if (!asMember && (last === 'CUBE' || model.byName.has(last) || model.openWorld)) return UNCHECKED;
    return unknownMember(scope, last);
  }
  const owner = named(segments[n - 2]!);
  const found = owner && !owner.opaque ? memberOf(owner, last) : undefined;
  if (found) return checkPrefix(model, segments.slice(0, n - 2)) ?? found;
  const timeOwner = n === 2 ? scope : named(segments[n - 3]!);
  const time = timeOwner && !timeOwner.opaque ? memberOf(timeOwner, segments[n - 2]!) : undefined;
  if (time && (time.member.type === 'time' || time.member.broken)) return checkPrefix(model, segments.slice(0, Math.max(0, n - 3))) ?? time;
  if (!owner) return unknownCube(model, segments[n - 2]!);
  return unknownMember(owner, last);
}

/** The cubes a reference walks through before its own (`{orders.customers.name}`) must exist. */
function checkPrefix(model: Model, prefix: string[]): Resolution | undefined {
  for (const name of prefix) if (name !== 'CUBE' && !model.byName.has(name)) return unknownCube(model, name);
  return undefined;
}

/** Member graph for the cycle check: `cube.member` -> the members its SQL reads. */
export interface MemberGraph {
  edges: Map<string, string[]>;
  members: Map<string, { entity: EntitySymbol; member: MemberSymbol }>;
}

export const nodeKey = (entity: EntitySymbol, member: MemberSymbol) => `${entity.name}.${member.name}`;

/** Every SQL expression in a definition, with its path: `sql` keys at any depth, except in free-form `meta` and `values`. */
export function sqlExpressions(value: unknown, path: Path = [], found: Array<[Path, string]> = []): Array<[Path, string]> {
  if (Array.isArray(value)) {
    value.forEach((item, i) => sqlExpressions(item, [...path, i], found));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'meta' || key === 'values') continue;
      if ((key === 'sql' || key === 'switch') && typeof inner === 'string') found.push([[...path, key], inner]);
      else if (typeof inner === 'object' && inner !== null) sqlExpressions(inner, [...path, key], found);
    }
  }
  return found;
}

/** Resolves one SQL expression, reporting what does not resolve; returns the members it reads. */
export function checkSql(
  model: Model,
  scope: EntitySymbol,
  sql: unknown,
  subject: string,
  where: { entity: EntitySymbol; path: Path } | null,
  report: Report,
): Array<{ member: MemberSymbol; entity: EntitySymbol }> {
  const read: Array<{ member: MemberSymbol; entity: EntitySymbol }> = [];
  if (typeof sql !== 'string') return read;
  for (const reference of referencesIn(sql)) {
    const resolution = resolve(model, scope, reference.segments);
    if ('member' in resolution) read.push(resolution);
    else if ('problem' in resolution && where)
      report.at(where.entity.file, where.path, `${subject} ${resolution.problem} in ${reference.text}${resolution.hint}`, { text: reference.text });
  }
  return read;
}

/**
 * A member's SQL, resolved in the context of `entity` (which may have inherited it). Problems are
 * reported only where the member is defined: an inherited member's problems are its parent's.
 */
function memberReferences(model: Model, entity: EntitySymbol, member: MemberSymbol, report: Report, graph: MemberGraph): void {
  const key = nodeKey(entity, member);
  const edges: string[] = [];
  const subject = `${cubeSubject(entity.kind, entity.name)}: ${member.kind} "${member.name}"`;
  for (const [path, sql] of sqlExpressions(member.raw)) {
    const where = member.owner === entity ? { entity, path: [...member.path, ...path] } : null;
    for (const read of checkSql(model, entity, sql, subject, where, report)) edges.push(nodeKey(read.entity, read.member));
  }
  graph.edges.set(key, edges);
  graph.members.set(key, { entity, member });
}

/** A join is named after the cube it joins; its SQL may read both cubes. */
function joinReferences(model: Model, entity: EntitySymbol, report: Report): void {
  for (const [join, i] of intact(entity, 'joins', (entity.raw as RawCube).joins)) {
    const path = [...entity.path, 'joins', i];
    const subject = `Join "${join.name}" of cube "${entity.name}"`;
    const target = model.byName.get(join.name);
    if (!target && !model.openWorld)
      report.at(entity.file, [...path, 'name'], `${subject} refers to unknown cube "${join.name}"${didYouMean(join.name, model.byName.keys())}`);
    else if (target?.kind === 'view')
      report.at(entity.file, [...path, 'name'], `${subject} refers to "${join.name}", which is a view; joins are between cubes`);
    checkSql(model, entity, join.sql, subject, { entity, path: [...path, 'sql'] }, report);
  }
}

export function checkReferences(model: Model, report: Report): MemberGraph {
  const graph: MemberGraph = { edges: new Map(), members: new Map() };
  for (const entity of model.entities) {
    for (const member of entity.members.values()) if (!member.broken) memberReferences(model, entity, member, report, graph);
    if (entity.kind === 'cube') joinReferences(model, entity, report);
  }
  return graph;
}
