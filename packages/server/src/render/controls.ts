/*
 * Pure on purpose, like chart-spec.ts: the embedded dashboard page (packages/embed) applies a
 * viewer's controls with this same code, so its queries are the ones a render runs.
 */

/** A dashboard filter as section 6.0 of the reference gives it (DashboardFilterInput). */
export interface DashboardFilter {
  member: string;
  operator?: string | null;
  value?: unknown;
  caseSensitive?: unknown;
  startInclusive?: unknown;
  endInclusive?: unknown;
}

export interface DashboardTimeGrain {
  member: string;
  grain: string;
}

export interface DashboardMemberSwitcher {
  member: string;
  selected: string;
}

/** What a render applies to every report of the dashboard, as a viewer's controls would. */
export interface DashboardControls {
  filters?: DashboardFilter[] | null;
  timeGrains?: DashboardTimeGrain[] | null;
  memberSwitchers?: DashboardMemberSwitcher[] | null;
}

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

/** The query a report snapshot runs, with the controls applied to a semantic one; null when it has none. */
export function snapshotQuery(
  snapshot: { sqlQuery?: string | null; spec?: unknown },
  controls: DashboardControls,
): { sql: string } | { query: Record<string, unknown> } | null {
  if (snapshot.sqlQuery) return { sql: snapshot.sqlQuery };
  const spec = snapshot.spec;
  const query = typeof spec === 'object' && spec !== null ? (spec as Record<string, unknown>).query : undefined;
  if (typeof query === 'object' && query !== null && !Array.isArray(query)) return { query: applyControls(query as Record<string, unknown>, controls) };
  return null;
}
