import type { DashboardControls } from './types.js';

/**
 * The dashboard's controls applied to one report's semantic query (`spec.query`), as the
 * dashboard does for a viewer:
 * - member switchers replace a member by its sibling (`orders.status` with `selected: "size"`
 *   becomes `orders.size`) wherever the query names it;
 * - time grains set the granularity of the query's time dimension on that member;
 * - filters are added to the query's filters, but only those on a cube or view the query already
 *   reads, so a dashboard filter on one source leaves reports of other sources as they are.
 * The query is copied, never changed in place.
 */
export function applyControls(query: Record<string, unknown>, controls: DashboardControls): Record<string, unknown> {
  const switches = new Map((controls.memberSwitchers ?? []).map((s) => [s.member, `${s.member.slice(0, s.member.lastIndexOf('.'))}.${s.selected}`]));
  const swap = (name: unknown) => (typeof name === 'string' ? (switches.get(name) ?? name) : name);
  const out: Record<string, unknown> = { ...query };
  for (const key of ['measures', 'dimensions', 'segments'] as const) if (Array.isArray(query[key])) out[key] = (query[key] as unknown[]).map(swap);
  if (Array.isArray(query.order)) out.order = (query.order as unknown[]).map((entry) => (Array.isArray(entry) ? [swap(entry[0]), ...entry.slice(1)] : entry));
  else if (typeof query.order === 'object' && query.order !== null)
    out.order = Object.fromEntries(Object.entries(query.order).map(([name, dir]) => [swap(name), dir]));
  const grains = new Map((controls.timeGrains ?? []).map((g) => [g.member, g.grain]));
  if (Array.isArray(query.timeDimensions)) {
    out.timeDimensions = (query.timeDimensions as Array<Record<string, unknown>>).map((td) => {
      const dimension = swap(td.dimension);
      const grain = typeof dimension === 'string' ? grains.get(dimension) : undefined;
      return { ...td, dimension, ...(grain !== undefined ? { granularity: grain } : {}) };
    });
  }
  const sources = new Set(membersOf(out).map((m) => m.slice(0, m.indexOf('.'))));
  const filters = (controls.filters ?? []).filter((f) => sources.has(f.member.slice(0, f.member.indexOf('.'))));
  if (filters.length > 0) {
    const added = filters.map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined && v !== null)));
    out.filters = [...(Array.isArray(query.filters) ? (query.filters as unknown[]) : []), ...added];
  }
  return out;
}

function membersOf(query: Record<string, unknown>): string[] {
  const names: string[] = [];
  for (const key of ['measures', 'dimensions', 'segments'] as const)
    if (Array.isArray(query[key])) names.push(...(query[key] as unknown[]).filter((n): n is string => typeof n === 'string'));
  if (Array.isArray(query.timeDimensions))
    for (const td of query.timeDimensions as Array<Record<string, unknown>>) if (typeof td.dimension === 'string') names.push(td.dimension);
  return names.filter((n) => n.includes('.'));
}
