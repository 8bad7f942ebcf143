import type { ModelArtifact, CompiledCube, CompiledView } from '../areas/data-model/validator/artifact.js';
import type { RawAccessPolicy } from '../areas/data-model/validator/model-schema.js';
import { allows, matches, type SecurityContext } from './query/access.js';

/** A member as the data API's `/v1/meta` lists it: full name `cube.member`. */
export interface MetaMember {
  name: string;
  title: string;
  shortTitle: string;
  description?: string;
  type: string | null;
  public: boolean;
}

export interface MetaCube {
  name: string;
  title: string;
  description?: string;
  type: 'cube' | 'view';
  public: boolean;
  measures: MetaMember[];
  dimensions: MetaMember[];
  segments: MetaMember[];
}

const titled = (name: string) => name.replace(/_/g, ' ').replace(/^\w/, (c) => c.toUpperCase());

function member(owner: string, m: { name: string; title?: string; description?: string; public: boolean }, type: string | null): MetaMember {
  const shortTitle = m.title ?? titled(m.name);
  return { name: `${owner}.${m.name}`, title: `${titled(owner)} ${shortTitle}`, shortTitle, ...(m.description ? { description: m.description } : {}), type, public: m.public };
}

function cubeMeta(cube: CompiledCube): MetaCube {
  return {
    name: cube.name,
    title: cube.title ?? titled(cube.name),
    ...(cube.description ? { description: cube.description } : {}),
    type: 'cube',
    public: cube.public,
    measures: cube.measures.map((m) => member(cube.name, m, m.type)),
    dimensions: cube.dimensions.map((d) => member(cube.name, d, d.type)),
    segments: cube.segments.map((s) => member(cube.name, s, null)),
  };
}

function viewMeta(view: CompiledView): MetaCube {
  const of = (kind: 'measure' | 'dimension' | 'segment') => view.members.filter((m) => m.kind === kind).map((m) => member(view.name, { name: m.name, ...(m.title ? { title: m.title } : {}), ...(m.description ? { description: m.description } : {}), public: m.public }, m.type));
  return {
    name: view.name,
    title: view.title ?? titled(view.name),
    ...(view.description ? { description: view.description } : {}),
    type: 'view',
    public: view.public,
    measures: of('measure'),
    dimensions: of('dimension'),
    segments: of('segment'),
  };
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
  for (const entity of [...artifact.cubes, ...artifact.views]) if (entity.access_policy?.length) policies.set(entity.name, entity.access_policy as RawAccessPolicy[]);
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
  for (const c of [...artifact.cubes.map(cubeMeta), ...artifact.views.map(viewMeta)]) {
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
