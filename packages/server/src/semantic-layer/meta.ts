import type { ModelArtifact, CompiledCube, CompiledView } from '../areas/data-model/validator/artifact.js';

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
 * The compiled cubes and views as `/v1/meta` answers them. Private cubes, views and members
 * (`public: false`) are left out unless the caller may read them (the `meta-private` scope).
 */
export function metaOf(artifact: ModelArtifact, includePrivate: boolean): { cubes: MetaCube[] } {
  const all = [...artifact.cubes.map(cubeMeta), ...artifact.views.map(viewMeta)];
  if (includePrivate) return { cubes: all };
  return {
    cubes: all
      .filter((c) => c.public)
      .map((c) => ({ ...c, measures: c.measures.filter((m) => m.public), dimensions: c.dimensions.filter((m) => m.public), segments: c.segments.filter((m) => m.public) })),
  };
}
