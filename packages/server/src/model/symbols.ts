import { cubeSubject } from './describe.js';
import type { RawCube, RawDimension, RawJoin, RawMeasure, RawPreAggregation, RawSegment, RawView } from './model-schema.js';
import { locate, type ParsedFile, type Path } from './parse.js';
import type { Report } from './report.js';

export type MemberKind = 'measure' | 'dimension' | 'segment';
export type RawMember = RawMeasure | RawDimension | RawSegment;

/** A measure, dimension or segment where it is defined; a cube that inherits it shares this object. */
export interface MemberSymbol {
  name: string;
  kind: MemberKind;
  /** The measure or dimension type; null for segments. */
  type: string | null;
  raw: RawMember;
  owner: EntitySymbol;
  path: Path;
  /** It broke the schema: its name is known, what it says is not read. */
  broken?: boolean;
}

export interface Defined<T> {
  name: string;
  raw: T;
  owner: EntitySymbol;
  path: Path;
}

/** A cube member as a view exposes it: under its own name, or its alias, with the view's prefix. */
export interface Exposed {
  name: string;
  /** The cube the member is read from: the last cube of the join path. */
  entity: EntitySymbol;
  member: MemberSymbol;
  joinPath: string;
  /** Where the view includes it: its entry in `includes`, or the whole cubes entry for "*". */
  path: Path;
  title?: string;
  description?: string;
  format?: unknown;
  meta?: unknown;
}

/** A cube or a view, with everything it has once what it extends is merged in. */
export interface EntitySymbol {
  kind: 'cube' | 'view';
  name: string;
  raw: RawCube | RawView;
  file: ParsedFile;
  path: Path;
  /** Its file could not be read as a model: its name is known, nothing in it is. References into it are not checked. */
  opaque: boolean;
  /** It extends something unknown here (a JavaScript cube, a broken file): references to members it may lack are not errors. */
  incomplete: boolean;
  parent: EntitySymbol | null;
  members: Map<string, MemberSymbol>;
  joins: Map<string, Defined<RawJoin>>;
  preAggregations: Map<string, Defined<RawPreAggregation>>;
  /** A view's members taken from cubes (views.ts); empty for cubes. */
  exposed: Map<string, Exposed>;
  /** Entries of its lists that broke the schema, as `measures/2`. */
  brokenItems: Set<string>;
}

export interface Model {
  /** Every name, first definition wins; later ones are duplicates. */
  byName: Map<string, EntitySymbol>;
  /** The entities read in full, in file and then list order: what the checks walk. */
  entities: EntitySymbol[];
  /**
   * Some of the model could not be read here (JavaScript files, templates, files with syntax
   * errors): a reference to a cube not found may be to one of those, so it is not an error.
   */
  openWorld: boolean;
}

export function entityOf(kind: 'cube' | 'view', raw: RawCube | RawView, file: ParsedFile, path: Path, opaque: boolean, brokenItems: Set<string>): EntitySymbol {
  const entity: EntitySymbol = {
    kind,
    name: raw.name,
    raw,
    file,
    path,
    opaque,
    incomplete: opaque,
    parent: null,
    members: new Map(),
    joins: new Map(),
    preAggregations: new Map(),
    exposed: new Map(),
    brokenItems,
  };
  // What a view exposes through a broken cubes entry is unknown, so references into the view cannot be checked.
  if ([...brokenItems].some((key) => key.startsWith('cubes/'))) entity.incomplete = true;
  return entity;
}

/** The entries of one of an entity's lists that passed the schema, with their indexes in the list. */
export function intact<T>(entity: EntitySymbol, list: string, entries: T[] | undefined): Array<[T, number]> {
  const found: Array<[T, number]> = [];
  entries?.forEach((entry, i) => {
    if (!entity.brokenItems.has(`${list}/${i}`)) found.push([entry, i]);
  });
  return found;
}

/** A broken entry's name, if it has one to be known by. */
function nameOf(entry: unknown): string | null {
  const name = (entry as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : null;
}

/** Registers names across files: a cube or view name is used once in the whole model. */
export function register(model: Model, entity: EntitySymbol, report: Report): void {
  if (typeof entity.name !== 'string') return;
  const first = model.byName.get(entity.name);
  if (!first) {
    model.byName.set(entity.name, entity);
  } else {
    const where = locate(first.file, [...first.path, 'name']);
    const other = first.kind === entity.kind ? `another ${first.kind}` : `a ${first.kind}`;
    report.at(
      entity.file,
      [...entity.path, 'name'],
      `${cubeSubject(entity.kind, entity.name)} has the same name as ${other} in ${first.file.path} (line ${where.line}); cube and view names must be unique`,
    );
  }
  if (!entity.opaque) model.entities.push(entity);
}

/**
 * An entity's own members, joins and pre-aggregations, first definition of a name first (a
 * second one is an error of rules.ts). A broken entry is kept by name, so what refers to it is
 * not also reported; one without a name makes the entity incomplete.
 */
function ownDefinitions(entity: EntitySymbol): void {
  const add = (kind: MemberKind, list: RawMember[] | undefined, key: string) =>
    list?.forEach((raw, i) => {
      const broken = entity.brokenItems.has(`${key}/${i}`);
      const name = nameOf(raw);
      if (name === null) {
        entity.incomplete = true;
      } else if (entity.members.get(name)?.owner !== entity) {
        const type = broken || kind === 'segment' ? null : (raw as RawMeasure).type;
        entity.members.set(name, { name, kind, type, raw, owner: entity, path: [...entity.path, key, i], broken });
      }
    });
  add('dimension', entity.raw.dimensions, 'dimensions');
  add('measure', entity.raw.measures, 'measures');
  add('segment', entity.raw.segments, 'segments');
  if (entity.kind !== 'cube') return;
  const cube = entity.raw as RawCube;
  const named = <T>(key: string, list: T[] | undefined, into: Map<string, Defined<T>>) =>
    list?.forEach((raw, i) => {
      const name = nameOf(raw);
      if (name === null) entity.incomplete = true;
      else if (into.get(name)?.owner !== entity) into.set(name, { name, raw, owner: entity, path: [...entity.path, key, i] });
    });
  named('joins', cube.joins, entity.joins);
  named('pre_aggregations', cube.pre_aggregations, entity.preAggregations);
}

/** Cycles of `extends`, each reported once, from the entity that comes first in the files. */
function extendsCycles(model: Model, report: Report): Set<EntitySymbol> {
  const inCycle = new Set<EntitySymbol>();
  const order = new Map(model.entities.map((entity, i) => [entity, i]));
  for (const start of model.entities) {
    const chain: EntitySymbol[] = [];
    let current: EntitySymbol | undefined = start;
    while (current && !chain.includes(current) && !inCycle.has(current)) {
      chain.push(current);
      current = current.raw.extends === undefined ? undefined : model.byName.get(current.raw.extends);
      if (current?.opaque) current = undefined;
    }
    if (!current || inCycle.has(current)) continue;
    const cycle = chain.slice(chain.indexOf(current));
    const first = cycle.reduce((a, b) => (order.get(a)! <= order.get(b)! ? a : b));
    const rotated = [...cycle.slice(cycle.indexOf(first)), ...cycle.slice(0, cycle.indexOf(first))];
    cycle.forEach((entity) => inCycle.add(entity));
    report.at(first.file, [...first.path, 'extends'], `Circular extends: ${[...rotated, first].map((e) => e.name).join(' -> ')}`);
  }
  return inCycle;
}

function parentOf(entity: EntitySymbol, model: Model, report: Report): EntitySymbol | null {
  const name = entity.raw.extends;
  if (name === undefined) return null;
  const parent = model.byName.get(name);
  const subject = cubeSubject(entity.kind, entity.name);
  if (!parent) {
    entity.incomplete = true;
    if (!model.openWorld) report.at(entity.file, [...entity.path, 'extends'], `${subject} extends unknown ${entity.kind} "${name}"`);
    return null;
  }
  if (parent.opaque) {
    entity.incomplete = true;
    return null;
  }
  if (parent.kind !== entity.kind) {
    report.at(
      entity.file,
      [...entity.path, 'extends'],
      `${subject} extends "${name}", which is a ${parent.kind}; a ${entity.kind} can only extend a ${entity.kind}`,
    );
    return null;
  }
  return parent;
}

/**
 * Merges each entity with what it extends: the parent's members, joins and pre-aggregations
 * first, then its own, which replace the parent's of the same name. Parents merge before their
 * children, so a chain of any length is merged once.
 */
export function resolveExtends(model: Model, report: Report): void {
  const inCycle = extendsCycles(model, report);
  const done = new Set<EntitySymbol>();
  const merge = (entity: EntitySymbol): void => {
    if (done.has(entity)) return;
    done.add(entity);
    const parent = inCycle.has(entity) ? null : parentOf(entity, model, report);
    if (inCycle.has(entity)) entity.incomplete = true;
    if (parent) {
      merge(parent);
      entity.parent = parent;
      entity.incomplete ||= parent.incomplete;
      for (const [name, member] of parent.members) entity.members.set(name, member);
      for (const [name, join] of parent.joins) entity.joins.set(name, join);
      for (const [name, preAggregation] of parent.preAggregations) entity.preAggregations.set(name, preAggregation);
    }
    ownDefinitions(entity);
  };
  for (const entity of model.entities) merge(entity);
}
