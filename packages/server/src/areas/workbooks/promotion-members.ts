import type { ModelArtifact } from '../../model/index.js';

/** How a report's query uses a member: the list it is named in (`member`: a filter, any kind). */
export type MemberUse = 'measure' | 'dimension' | 'segment' | 'timeDimension' | 'member';

export interface MissingMember {
  /** `cube.member` (or `view.member`), as the report names it. */
  member: string;
  use: MemberUse;
  /** The source reports that use it, ascending. */
  reportIds: number[];
}

type Kind = 'measure' | 'dimension' | 'segment';

/** Every member of a compiled model by name, with its kind and whether it is a time dimension. */
export function membersOf(artifact: ModelArtifact): Map<string, { kind: Kind; time: boolean }> {
  const members = new Map<string, { kind: Kind; time: boolean }>();
  for (const cube of artifact.cubes) {
    for (const m of cube.measures) members.set(`${cube.name}.${m.name}`, { kind: 'measure', time: false });
    for (const d of cube.dimensions) members.set(`${cube.name}.${d.name}`, { kind: 'dimension', time: d.type === 'time' });
    for (const s of cube.segments) members.set(`${cube.name}.${s.name}`, { kind: 'segment', time: false });
  }
  for (const view of artifact.views)
    for (const m of view.members) members.set(`${view.name}.${m.name}`, { kind: m.kind, time: m.kind === 'dimension' && m.type === 'time' });
  return members;
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/** The members a filter names, through `and`/`or` groups, to a bounded depth (a body is bounded anyway). */
function filterMembers(filters: unknown, out: Array<[string, MemberUse]>, depth = 0): void {
  if (!Array.isArray(filters) || depth > 20) return;
  for (const filter of filters) {
    if (typeof filter !== 'object' || filter === null) continue;
    const f = filter as Record<string, unknown>;
    for (const key of ['member', 'dimension'] as const) if (typeof f[key] === 'string') out.push([f[key], 'member']);
    filterMembers(f.and, out, depth + 1);
    filterMembers(f.or, out, depth + 1);
  }
}

/**
 * The members a report's semantic query (`spec.query`) names: measures, dimensions, segments, time
 * dimensions and filtered members. A report written in SQL (`sqlQuery`) names none that can be
 * read without running it, so it names none here.
 */
export function membersUsedBy(spec: unknown): Array<[string, MemberUse]> {
  const query = typeof spec === 'object' && spec !== null ? (spec as { query?: unknown }).query : undefined;
  if (typeof query !== 'object' || query === null) return [];
  const q = query as Record<string, unknown>;
  const out: Array<[string, MemberUse]> = [];
  for (const m of strings(q.measures)) out.push([m, 'measure']);
  for (const m of strings(q.dimensions)) out.push([m, 'dimension']);
  for (const m of strings(q.segments)) out.push([m, 'segment']);
  if (Array.isArray(q.timeDimensions))
    for (const t of q.timeDimensions) {
      const dimension = typeof t === 'object' && t !== null ? (t as { dimension?: unknown }).dimension : undefined;
      if (typeof dimension === 'string') out.push([dimension, 'timeDimension']);
    }
  filterMembers(q.filters, out);
  return out;
}

/** Whether `name` is in the model as `use` needs it; a dimension may carry a granularity (`cube.time.month`). */
function present(members: Map<string, { kind: Kind; time: boolean }>, name: string, use: MemberUse): boolean {
  const found = members.get(name);
  if (found) {
    if (use === 'member') return true;
    if (use === 'timeDimension') return found.kind === 'dimension' && found.time;
    return found.kind === use;
  }
  if (use !== 'dimension' && use !== 'timeDimension') return false;
  const base = members.get(name.slice(0, name.lastIndexOf('.')));
  return name.split('.').length === 3 && base?.kind === 'dimension' && base.time;
}

/** The members the reports use that the model lacks (or has as another kind), sorted by member then use. */
export function missingMembers(artifact: ModelArtifact, reports: Array<{ id: number; spec: unknown }>): MissingMember[] {
  const members = membersOf(artifact);
  const missing = new Map<string, MissingMember>();
  for (const report of reports) {
    for (const [member, use] of membersUsedBy(report.spec)) {
      if (present(members, member, use)) continue;
      const key = `${member}\u0000${use}`;
      const entry = missing.get(key) ?? { member, use, reportIds: [] };
      if (!entry.reportIds.includes(report.id)) entry.reportIds.push(report.id);
      missing.set(key, entry);
    }
  }
  return [...missing.values()]
    .map((m) => ({ ...m, reportIds: m.reportIds.sort((a, b) => a - b) }))
    .sort((a, b) => (a.member === b.member ? (a.use < b.use ? -1 : 1) : a.member < b.member ? -1 : 1));
}
