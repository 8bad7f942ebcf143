import { sql, type RawBuilder } from 'kysely';
import { parse, type Filter } from 'scim2-parse-filter';
import type { Dialect } from '../../db/database.js';
import { ATTRIBUTES_SCHEMA, type AttrDef, type SchemaDef } from './scim.attributes.js';
import { invalidFilter, invalidValue, ScimError } from './scim.errors.js';
import { compareScalar, hasValue, Json, type CompareOp, type Cond, type Scalar } from './scim.filter-sql.js';
import { documentPath, resolvePath, type ResolvedPath, type ResourceKind } from './scim.paths.js';

/**
 * Compiles a SCIM filter (RFC 7644 section 3.4.2.2) into a parameterised SQL condition over the
 * users (or groups) table joined with its SCIM table. Every value from the filter travels as a
 * bound parameter; attribute names only select among expressions written here. SQLite and
 * PostgreSQL differ only in how a JSON value is read, which `Json` (scim.filter-sql.ts) hides.
 */
export interface FilterContext {
  kind: ResourceKind;
  schemas: SchemaDef[];
  dialect: Dialect;
  /**
   * Set for a search over several resource types (RFC 7644 section 3.4.2.2): an attribute this
   * type does not have is read as unassigned rather than refused, and its path (lower case) is
   * recorded here, so the caller can refuse one that no searched type has.
   */
  absent?: Set<string>;
}

const SCALAR_OPS = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']);

/**
 * Rewrites `emails[type eq "work"].value co "x"` (a value path followed by a sub-attribute, as
 * some clients write it) into the RFC form `emails[(type eq "work") and value co "x"]`. Quoted
 * strings are skipped, so brackets inside values are never touched.
 */
export function foldSubAttributePaths(text: string): string {
  let out = '';
  let i = 0;
  const open: number[] = [];
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === '"') {
      const start = i;
      i += 1;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      out += text.slice(start, i + 1);
      i += 1;
      continue;
    }
    if (ch === '[') open.push(out.length);
    if (ch === ']' && open.length > 0) {
      const at = open.pop() as number;
      const rest = /^\.([A-Za-z$][\w$-]*)\s+(pr\b|(?:eq|ne|co|sw|ew|gt|ge|lt|le)\s+("(?:[^"\\]|\\.)*"|[^\s()\]]+))/i.exec(text.slice(i + 1));
      if (rest) {
        const inner = out.slice(at + 1);
        out = `${out.slice(0, at + 1)}(${inner}) and ${rest[1]} ${rest[2]}]`;
        i += 1 + rest[0].length;
        continue;
      }
    }
    out += ch;
    i += 1;
  }
  return out;
}

/** The longest filter accepted, in characters. */
export const MAX_FILTER_LENGTH = 4096;
/**
 * How deeply `and`/`or`/`not`/`[]` may nest. Each level becomes nested SQL, and SQLite refuses
 * expressions past its depth limit; real filters from identity providers nest a few levels.
 */
export const MAX_FILTER_DEPTH = 50;

function depthOf(filter: Filter): number {
  switch (filter.op) {
    case 'and':
    case 'or':
      return 1 + Math.max(0, ...filter.filters.map(depthOf));
    case 'not':
      return 1 + depthOf(filter.filter);
    case '[]':
      return 1 + depthOf(filter.valFilter);
    default:
      return 1;
  }
}

export function parseFilter(text: string): Filter {
  // Checked here rather than by the query schema, so the client gets the filter's own scimType.
  if (text.length > MAX_FILTER_LENGTH) throw invalidFilter(`A filter may have at most ${MAX_FILTER_LENGTH} characters.`);
  let filter: Filter;
  try {
    filter = parse(foldSubAttributePaths(text));
  } catch (error) {
    throw invalidFilter(
      `The filter ${JSON.stringify(text)} is not valid SCIM filter syntax (RFC 7644 section 3.4.2.2): ${(error as Error).message}. String values must be quoted.`,
    );
  }
  if (depthOf(filter) > MAX_FILTER_DEPTH) throw invalidFilter(`The filter nests more than ${MAX_FILTER_DEPTH} levels deep.`);
  return filter;
}

/** Compiles `filter` to a SQL condition; unknown attributes and unsupported comparisons are `invalidFilter`. */
export function compileFilter(filter: Filter, context: FilterContext): Cond {
  return new Compiler(context).compile(filter);
}

/** A sort key for `sortBy` (RFC 7644 section 3.4.2.3): only single-valued attributes sort. */
export function sortExpression(path: string, context: FilterContext): RawBuilder<unknown> {
  const compiler = new Compiler(context);
  let scalar: Scalar | undefined;
  try {
    scalar = compiler.scalarFor(path, true);
  } catch (error) {
    // The same lookups as filters, but a bad sortBy is an invalid value, not an invalid filter.
    if (error instanceof ScimError) throw invalidValue(error.detail.replace('in the filter', 'in sortBy'));
    throw error;
  }
  if (!scalar) throw invalidValue(`sortBy must name a single-valued attribute, not "${path}".`);
  const expr = scalar.caseExact ? scalar.expr : sql`lower(${scalar.expr})`;
  // PostgreSQL would sort by the database's locale; "C" gives the byte order SQLite uses.
  return context.dialect === 'postgres' ? sql`${expr} collate "C"` : expr;
}

class Compiler {
  readonly json: Json;
  constructor(readonly context: FilterContext) {
    this.json = new Json(context.dialect);
  }

  get table(): 'scim_users' | 'scim_groups' {
    return this.context.kind === 'User' ? 'scim_users' : 'scim_groups';
  }

  compile(filter: Filter): Cond {
    switch (filter.op) {
      case 'and':
      case 'or': {
        const parts = filter.filters.map((f) => sql`(${this.compile(f)})`);
        return sql.join(parts, filter.op === 'and' ? sql` and ` : sql` or `);
      }
      case 'not':
        return sql`not coalesce((${this.compile(filter.filter)}), false)`;
      case '[]':
        if (this.isAbsent(filter.attrPath)) return sql`1 = 0`;
        return this.valuePath(filter.attrPath, filter.valFilter);
      case 'pr':
        if (this.isAbsent(filter.attrPath)) return sql`1 = 0`;
        return this.present(filter.attrPath);
      default:
        if (!SCALAR_OPS.has(filter.op)) throw invalidFilter(`Unknown filter operator "${filter.op}".`);
        // The value is still checked: a comparison no attribute could make is refused as usual.
        if (this.isAbsent(filter.attrPath))
          return compareScalar(
            { expr: sql`cast(null as text)`, type: 'string', caseExact: true },
            filter.op as CompareOp,
            filter.compValue,
            this.context.dialect,
          );
        return this.compare(filter.attrPath, filter.op as CompareOp, filter.compValue);
    }
  }

  /** In a search over several types, true (and recorded) when this type has no such attribute. */
  isAbsent(path: string): boolean {
    const absent = this.context.absent;
    if (!absent || this.column(path) !== undefined || resolvePath(this.context.schemas, path) !== undefined) return false;
    absent.add(path.toLowerCase());
    return true;
  }

  resolve(path: string) {
    const resolved = resolvePath(this.context.schemas, path);
    if (!resolved) throw invalidFilter(`Unknown attribute "${path}" in the filter; /Schemas lists the attributes of ${this.context.kind}.`);
    return resolved;
  }

  /** Attributes the REST tables hold, by lower-case path; everything else is read from the SCIM document. */
  column(path: string): Scalar | 'active' | undefined {
    const table = this.context.kind === 'User' ? 'users' : 'groups';
    // Maps, not objects: the key is the client's, and `constructor` or `__proto__` must name nothing.
    const common = new Map<string, Scalar>([
      ['id', { expr: sql`cast(${sql.ref(`${table}.id`)} as text)`, type: 'string', caseExact: true }],
      ['meta.created', { expr: sql.ref(`${table}.created_at`), type: 'dateTime', caseExact: true }],
      ['meta.lastmodified', { expr: sql.ref(`${table}.updated_at`), type: 'dateTime', caseExact: true }],
      ['meta.resourcetype', { expr: sql`cast(${this.context.kind} as text)`, type: 'string', caseExact: true }],
    ]);
    const own = new Map<string, Scalar | 'active'>(
      this.context.kind === 'User'
        ? [
            ['username', { expr: sql.ref('users.email'), type: 'string', caseExact: false }],
            ['name.givenname', { expr: sql.ref('users.first_name'), type: 'string', caseExact: false }],
            ['active', 'active'],
          ]
        : [['displayname', { expr: sql.ref('groups.name'), type: 'string', caseExact: false }]],
    );
    const key = this.canonicalKey(path);
    return own.get(key) ?? common.get(key);
  }

  /** `urn:…:core:2.0:User:userName` and `userName` are the same attribute. */
  canonicalKey(path: string): string {
    const core = (this.context.schemas[0] as SchemaDef).id.toLowerCase();
    const lower = path.toLowerCase();
    return lower.startsWith(`${core}:`) ? lower.slice(core.length + 1) : lower;
  }

  /** The single-valued attribute at `path` as a scalar; undefined for multi-valued ones. */
  scalarFor(path: string, forSort = false): Scalar | undefined {
    const column = this.column(path);
    if (column === 'active') return { expr: sql`case when users.deactivated_at is null then 'true' else 'false' end`, type: 'boolean', caseExact: true };
    if (column) return column;
    const resolved = this.resolve(path);
    // The location and version are computed per response, never stored, so nothing can select on them.
    if (resolved.core && resolved.attr.name === 'meta')
      throw invalidFilter(`"${path}" cannot be filtered or sorted on; use meta.created or meta.lastModified.`);
    if (resolved.schema.id === ATTRIBUTES_SCHEMA) throw invalidFilter(`Sorting by user attribute "${path}" is not supported.`);
    if (resolved.attr.multiValued) {
      if (forSort) throw invalidFilter(`sortBy must name a single-valued attribute; "${path}" is multi-valued.`);
      return undefined;
    }
    const def = resolved.sub ?? resolved.attr;
    if (def.type === 'complex') throw invalidFilter(`"${path}" is a complex attribute; name one of its sub-attributes.`);
    return { expr: this.json.text(this.json.document(this.table), documentPath(resolved), def.type), type: def.type, caseExact: def.caseExact };
  }

  /**
   * User attributes live in user_attribute_values, one JSON value per user and attribute; a user
   * without one has the attribute's default, as the REST API reports it. A condition on one is an
   * EXISTS over the attribute's definition with the user's effective value (or its list elements).
   * The value is read only through the definition it belongs to, so a comparison never sees the
   * values of other attributes.
   */
  userAttribute(path: string, cond: (scalar: Scalar) => Cond): Cond | undefined {
    if (this.context.kind !== 'User' || !path.toLowerCase().startsWith(`${ATTRIBUTES_SCHEMA.toLowerCase()}:`)) return undefined;
    const resolved = this.resolve(path);
    if (resolved.sub) throw invalidFilter(`User attribute ${resolved.attr.name} has no sub-attributes.`);
    const def = resolved.attr;
    const postgres = this.context.dialect === 'postgres';
    const effective = sql`coalesce(uav.value, ua.default_value)`;
    const source = postgres ? sql`cast(${effective} as jsonb)` : effective;
    let inner: Cond;
    if (def.multiValued) {
      // SQLite's json_each gives a string element as plain text; PostgreSQL gives jsonb, read with #>> '{}'.
      inner = this.json.anyElement(source, [], (el) => cond({ expr: postgres ? this.json.text(el, [], def.type) : el, type: def.type, caseExact: false }));
    } else if (def.type === 'decimal') {
      // Read as a number only when the JSON value is one, so no cast can fail on other text.
      const expr = postgres
        ? sql`(case when jsonb_typeof(${source}) = 'number' then cast(${source} #>> '{}' as numeric) end)`
        : sql`(case when json_type(${source}) in ('integer', 'real') then json_extract(${source}, '$') end)`;
      inner = cond({ expr, type: def.type, caseExact: false });
    } else {
      inner = cond({ expr: this.json.text(source, [], def.type), type: def.type, caseExact: false });
    }
    return sql`exists (select 1 from user_attributes ua left join user_attribute_values uav on uav.attribute_id = ua.id and uav.user_id = users.id
      where ua.tenant_id = users.tenant_id and lower(ua.name) = cast(${def.name.toLowerCase()} as text) and ${inner})`;
  }

  compare(path: string, op: CompareOp, value: unknown): Cond {
    const attribute = this.userAttribute(path, (scalar) => compareScalar(scalar, op, value, this.context.dialect));
    if (attribute) return attribute;
    const scalar = this.scalarFor(path);
    if (scalar) return compareScalar(scalar, op, value, this.context.dialect);
    // A multi-valued attribute: `emails co "x"` means some element's value matches (RFC 7644 3.4.2.2).
    const resolved = this.resolve(path);
    return this.anyElement(resolved, (element) => {
      const sub = resolved.sub ?? resolved.attr.subAttributes?.find((s) => s.name === 'value');
      if (!sub) throw invalidFilter(`"${path}" has no value to compare; name a sub-attribute.`);
      return compareScalar(element(sub), op, value, this.context.dialect);
    });
  }

  present(path: string): Cond {
    const attribute = this.userAttribute(path, (scalar) => hasValue(scalar));
    if (attribute) return attribute;
    const complex = this.complexSingle(path);
    if (complex) return complex;
    const scalar = this.scalarFor(path);
    if (scalar) return hasValue(scalar);
    const resolved = this.resolve(path);
    return this.anyElement(resolved, (element) => {
      if (!resolved.sub) return sql`1 = 1`;
      return hasValue(element(resolved.sub));
    });
  }

  /**
   * `pr` on a complex single-valued attribute (`name`, the enterprise `manager`): present when any
   * of its sub-attributes has a value (RFC 7644 section 3.4.2.2 allows `pr` on any attribute).
   * Each sub-attribute is read where it lives, so `name` is present with only a given name (a
   * column of the users table) too. Undefined for every other kind of attribute.
   */
  complexSingle(path: string): Cond | undefined {
    if (this.column(path)) return undefined;
    const resolved = this.resolve(path);
    if (resolved.sub || resolved.attr.multiValued || resolved.attr.type !== 'complex') return undefined;
    // Every resource has meta, assigned by the server.
    if (resolved.core && resolved.attr.name === 'meta') return sql`1 = 1`;
    const prefix = resolved.core ? '' : `${resolved.schema.id}:`;
    const parts = (resolved.attr.subAttributes ?? []).map((sub) => {
      const scalar = this.scalarFor(`${prefix}${resolved.attr.name}.${sub.name}`) as Scalar;
      return sql`(${hasValue(scalar)})`;
    });
    return parts.length > 0 ? sql`(${sql.join(parts, sql` or `)})` : sql`1 = 0`;
  }

  /** `emails[type eq "work" and value co "@example.com"]`: one element must satisfy the whole inner filter. */
  valuePath(path: string, inner: Filter): Cond {
    const resolved = this.resolve(path);
    if (!resolved.attr.multiValued || resolved.sub) throw invalidFilter(`"${path}[…]" needs a multi-valued attribute such as emails or members.`);
    return this.anyElement(resolved, (element) => this.compileElement(inner, resolved.attr, element));
  }

  compileElement(filter: Filter, parent: AttrDef, element: (sub: AttrDef) => Scalar): Cond {
    switch (filter.op) {
      case 'and':
      case 'or':
        return sql.join(
          filter.filters.map((f) => sql`(${this.compileElement(f, parent, element)})`),
          filter.op === 'and' ? sql` and ` : sql` or `,
        );
      case 'not':
        return sql`not coalesce((${this.compileElement(filter.filter, parent, element)}), false)`;
      case '[]':
        throw invalidFilter('Value paths cannot be nested.');
      default: {
        const name = filter.attrPath.includes('.') ? filter.attrPath.slice(filter.attrPath.lastIndexOf('.') + 1) : filter.attrPath;
        const sub = parent.subAttributes?.find((s) => s.name.toLowerCase() === name.toLowerCase());
        if (!sub) throw invalidFilter(`"${parent.name}" has no sub-attribute "${filter.attrPath}".`);
        const scalar = element(sub);
        if (filter.op === 'pr') return hasValue(scalar);
        return compareScalar(scalar, filter.op as CompareOp, filter.compValue, this.context.dialect);
      }
    }
  }

  /** EXISTS over one element of a multi-valued attribute; group members live in group_members. */
  anyElement(resolved: ResolvedPath, cond: (element: (sub: AttrDef) => Scalar) => Cond): Cond {
    const key = resolved.core ? resolved.attr.name : '';
    if (this.context.kind === 'Group' && key === 'members') {
      return sql`exists (select 1 from group_members gm inner join scim_users su on su.user_id = gm.user_id
        where gm.group_id = groups.id and ${cond((sub) => memberScalar(sub))})`;
    }
    if (this.context.kind === 'User' && key === 'groups') {
      return sql`exists (select 1 from group_members gm inner join scim_groups sg on sg.group_id = gm.group_id
        inner join groups g on g.id = gm.group_id where gm.user_id = users.id and ${cond((sub) => groupScalar(sub))})`;
    }
    return this.json.anyElement(this.json.document(this.table), documentPath({ schema: resolved.schema, core: resolved.core, attr: resolved.attr }), (el) =>
      cond((sub) => ({ expr: this.json.text(el, [sub.name], sub.type), type: sub.type, caseExact: sub.caseExact })),
    );
  }
}

function memberScalar(sub: AttrDef): Scalar {
  if (sub.name === 'value') return { expr: sql`cast(gm.user_id as text)`, type: 'string', caseExact: true };
  if (sub.name === 'type') return { expr: sql`'User'`, type: 'string', caseExact: false };
  throw invalidFilter(`Filtering on members.${sub.name} is not supported; use members.value.`);
}

function groupScalar(sub: AttrDef): Scalar {
  if (sub.name === 'value') return { expr: sql`cast(gm.group_id as text)`, type: 'string', caseExact: true };
  if (sub.name === 'display') return { expr: sql`g.name`, type: 'string', caseExact: false };
  throw invalidFilter(`Filtering on groups.${sub.name} is not supported; use groups.value or groups.display.`);
}
