import { COMMON_ATTRIBUTES, ENTERPRISE_SCHEMA_DEF, findAttr, GROUP_SCHEMA_DEF, USER_SCHEMA_DEF, type AttrDef, type SchemaDef } from './scim.attributes.js';

export type ResourceKind = 'User' | 'Group';

/** The schemas a resource may carry: its core schema first, then its extensions. */
export function schemasOf(kind: ResourceKind, extensions: SchemaDef[] = []): SchemaDef[] {
  return kind === 'User' ? [USER_SCHEMA_DEF, ENTERPRISE_SCHEMA_DEF, ...extensions] : [GROUP_SCHEMA_DEF];
}

/** An attribute path resolved against the schemas, with names in their canonical case. */
export interface ResolvedPath {
  schema: SchemaDef;
  /** True for the resource's core schema (attributes at the top level of the document). */
  core: boolean;
  attr: AttrDef;
  sub?: AttrDef;
}

/**
 * Resolves `name.familyName`, `emails.value`, `urn:…:User:department` or
 * `urn:…:core:2.0:User:userName`, ignoring case (RFC 7643 section 2.1). Undefined when unknown.
 */
export function resolvePath(schemas: SchemaDef[], path: string): ResolvedPath | undefined {
  let schema = schemas[0] as SchemaDef;
  let rest = path;
  if (path.toLowerCase().startsWith('urn:')) {
    const match = schemas.find((s) => path.toLowerCase().startsWith(`${s.id.toLowerCase()}:`));
    if (!match) return undefined;
    schema = match;
    rest = path.slice(match.id.length + 1);
  }
  const [name, subName, ...extra] = rest.split('.');
  if (!name || extra.length > 0) return undefined;
  const core = schema === schemas[0];
  const attr = findAttr(schema.attributes, name) ?? (core ? findAttr(COMMON_ATTRIBUTES, name) : undefined);
  if (!attr) return undefined;
  if (subName === undefined) return { schema, core, attr };
  const sub = findAttr(attr.subAttributes, subName);
  return sub ? { schema, core, attr, sub } : undefined;
}

/** Where a resolved attribute lives in a SCIM document: extension attributes sit under their schema URN. */
export function documentPath(resolved: ResolvedPath): string[] {
  const base = resolved.core ? [] : [resolved.schema.id];
  return [...base, resolved.attr.name, ...(resolved.sub ? [resolved.sub.name] : [])];
}
