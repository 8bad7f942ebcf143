import type { ModelArtifact, CompiledCube, CompiledView } from '../model/artifact.js';
import type { RawAccessPolicy } from '../model/model-schema.js';
import { allows, matches, type SecurityContext } from './query/access.js';
import { titled } from './query/members.js';
import { dataTypeOf } from './query/results.js';

/** A member as the data API's `/v1/meta` lists it, in Cube's shape: full name `cube.member`. */
export interface MetaMember {
  name: string;
  title: string;
  shortTitle: string;
  description?: string;
  /** The data type (`number`, `string`, `time`, `boolean`); a measure's aggregation is its `aggType`; none for a segment. */
  type?: string;
  isVisible: boolean;
  public: boolean;
  [extra: string]: unknown;
}

export interface MetaCube {
  name: string;
  title: string;
  description?: string;
  type: 'cube' | 'view';
  isVisible: boolean;
  public: boolean;
  connectedComponent?: number;
  meta?: unknown;
  measures: MetaMember[];
  dimensions: MetaMember[];
  segments: MetaMember[];
  hierarchies: unknown[];
  folders: Array<{ name: string; members: string[] }>;
}

type Extras = { description?: string; format?: unknown; meta?: unknown };
const optional = (m: Extras) => ({
  ...(m.description ? { description: m.description } : {}),
  ...(m.format !== undefined ? { format: m.format } : {}),
  ...(m.meta !== undefined ? { meta: m.meta } : {}),
});

/** Cube's meta member: titles (the owner's title before the member's), data type, visibility; per kind its own keys. */
function member(
  owner: { name: string; title: string; public: boolean },
  m: Extras & { name: string; title?: string; public: boolean },
  kind: 'measure' | 'dimension' | 'segment',
  type: string | null,
  extra: Record<string, unknown> = {},
): MetaMember {
  const shortTitle = m.title ?? titled(m.name);
  const visible = owner.public && m.public;
  const name = `${owner.name}.${m.name}`;
  const base = { name, title: `${owner.title} ${shortTitle}`, shortTitle, ...optional(m) };
  // Segments have no type in Cube's meta.
  if (kind === 'segment') return { ...base, isVisible: visible, public: visible } as MetaMember;
  if (kind === 'measure') {
    const drillMembers = ((extra.drill_members as string[] | undefined) ?? []).map((d) => (d.includes('.') ? d : `${owner.name}.${d}`));
    return {
      ...base,
      cumulativeTotal: false,
      cumulative: extra.cumulative === true,
      type: dataTypeOf(type),
      aggType: type ?? 'number',
      drillMembers,
      drillMembersGrouped: { measures: [], dimensions: drillMembers },
      isVisible: visible,
      public: visible,
    };
  }
  return {
    ...base,
    type: dataTypeOf(type),
    suggestFilterValues: true,
    isVisible: visible,
    public: visible,
    primaryKey: extra.primaryKey === true,
    ...(extra.granularities ? { granularities: extra.granularities } : {}),
  };
}

function cubeMeta(cube: CompiledCube, component: number): MetaCube {
  const owner = { name: cube.name, title: cube.title ?? titled(cube.name), public: cube.public };
  return {
    name: cube.name,
    title: owner.title,
    ...(cube.description ? { description: cube.description } : {}),
    type: 'cube',
    isVisible: cube.public,
    public: cube.public,
    connectedComponent: component,
    ...(cube.meta !== undefined ? { meta: cube.meta } : {}),
    measures: cube.measures.map((m) => member(owner, m, 'measure', m.type, { drill_members: m.drill_members, cumulative: m.rolling_window !== undefined })),
    dimensions: cube.dimensions.map((d) =>
      member(owner, d, 'dimension', d.type, {
        primaryKey: d.primary_key,
        ...(d.granularities
          ? {
              granularities: (d.granularities as Array<{ name: string; title?: string; interval?: string; offset?: string; origin?: string }>).map((g) => ({
                name: g.name,
                title: g.title ?? titled(g.name),
                interval: g.interval,
                ...(g.offset ? { offset: g.offset } : {}),
                ...(g.origin ? { origin: g.origin } : {}),
              })),
            }
          : {}),
      }),
    ),
    segments: cube.segments.map((s) => member(owner, s, 'segment', null)),
    hierarchies: (cube.hierarchies ?? []).map((h) => ({
      name: `${cube.name}.${h.name}`,
      title: h.title ?? titled(h.name),
      levels: h.levels.map((l) => (l.includes('.') ? l : `${cube.name}.${l}`)),
      public: true,
    })),
    folders: [],
  };
}

/** A view folder's members as full names; nested folders' members flattened into it (Cube's `folders`). */
function foldersOf(view: CompiledView): Array<{ name: string; members: string[] }> {
  type Folder = { name: string; includes: '*' | Array<string | Folder> };
  const flat = (folder: Folder): string[] =>
    folder.includes === '*'
      ? view.members.map((m) => `${view.name}.${m.name}`)
      : folder.includes.flatMap((item) => (typeof item === 'string' ? [`${view.name}.${item}`] : flat(item)));
  return ((view.folders ?? []) as Folder[]).map((f) => ({ name: f.name, members: flat(f) }));
}

function viewMeta(view: CompiledView, component: number | undefined): MetaCube {
  const owner = { name: view.name, title: view.title ?? titled(view.name), public: view.public };
  const of = (kind: 'measure' | 'dimension' | 'segment') => view.members.filter((m) => m.kind === kind).map((m) => member(owner, m, kind, m.type));
  return {
    name: view.name,
    title: owner.title,
    ...(view.description ? { description: view.description } : {}),
    type: 'view',
    isVisible: view.public,
    public: view.public,
    ...(component === undefined ? {} : { connectedComponent: component }),
    ...(view.meta !== undefined ? { meta: view.meta } : {}),
    measures: of('measure'),
    dimensions: of('dimension'),
    segments: of('segment'),
    hierarchies: [],
    folders: foldersOf(view),
  };
}

/** Cubes joined to each other (either way, transitively) share a number, as Cube's `connectedComponent`. */
function components(artifact: ModelArtifact): Map<string, number> {
  const parent = new Map<string, string>(artifact.cubes.map((c) => [c.name, c.name]));
  const find = (name: string): string => {
    let at = name;
    while (parent.get(at) !== at) at = parent.get(at)!;
    return at;
  };
  for (const cube of artifact.cubes) for (const join of cube.joins) if (parent.has(join.name)) parent.set(find(join.name), find(cube.name));
  const numbers = new Map<string, number>();
  const out = new Map<string, number>();
  for (const cube of artifact.cubes) {
    const root = find(cube.name);
    if (!numbers.has(root)) numbers.set(root, numbers.size + 1);
    out.set(cube.name, numbers.get(root)!);
  }
  return out;
}

/**
 * The compiled cubes and views as `/v1/meta` answers them to one caller. Private cubes, views and
 * members (`public: false`) are left out unless the caller may read them (the `meta-private`
 * scope), and so is what the model's access policies keep from the caller: a cube or view none of
 * whose policies applies to them, members no applying policy's `member_level` allows (for a
 * view's member, the policies of the cube behind it as well), so what it lists can be queried.
 */
export function metaOf(artifact: ModelArtifact, includePrivate: boolean, security: SecurityContext): { cubes: MetaCube[] } {
  const policies = new Map<string, RawAccessPolicy[]>();
  for (const entity of [...artifact.cubes, ...artifact.views])
    if (entity.access_policy?.length) policies.set(entity.name, entity.access_policy as RawAccessPolicy[]);
  // Whether the caller's policies on `entity` (a cube or a view) let them use its member `name`.
  const permits = (entity: string, name: string): boolean => {
    const own = policies.get(entity);
    if (!own) return true;
    return own.some((p) => matches(p, security) && allows(p, name));
  };
  // A view's member is the cube member behind it: the cube's policies apply to it too, as queries apply them.
  const behind = new Map<string, string>();
  for (const view of artifact.views) for (const m of view.members) if (m.member) behind.set(`${view.name}.${m.name}`, m.member);
  const visible: MetaCube[] = [];
  const component = components(artifact);
  // A view is in the component of the cube its members come from first.
  const viewComponent = (view: CompiledView) => {
    const first = view.members.find((m) => m.member)?.member;
    return first ? component.get(first.slice(0, first.indexOf('.'))) : undefined;
  };
  for (const c of [
    ...artifact.cubes.map((cube) => cubeMeta(cube, component.get(cube.name)!)),
    ...artifact.views.map((view) => viewMeta(view, viewComponent(view))),
  ]) {
    if (!includePrivate && !c.public) continue;
    // Nothing of a cube or view none of whose policies applies to the caller.
    const own = policies.get(c.name);
    if (own && !own.some((p) => matches(p, security))) continue;
    const keep = (m: MetaMember) => {
      if (!includePrivate && !m.public) return false;
      if (!permits(c.name, m.name.slice(c.name.length + 1))) return false;
      const cubeMember = behind.get(m.name);
      if (!cubeMember) return true;
      const dot = cubeMember.indexOf('.');
      return permits(cubeMember.slice(0, dot), cubeMember.slice(dot + 1));
    };
    visible.push({ ...c, measures: c.measures.filter(keep), dimensions: c.dimensions.filter(keep), segments: c.segments.filter(keep) });
  }
  return { cubes: visible };
}
