import { SessionEnded, type EmbedSession } from './session.js';

/** A call the server refused with problem details, shown in the widget that made it. */
export class CallFailed extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'CallFailed';
  }
}

/**
 * Calls this server with the session's token. 401 means the session was revoked (reference 4.17)
 * or its token lapsed: the session ends, and the page stops calling.
 */
export async function call<T>(session: EmbedSession, path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const token = await session.bearer();
  const res = await fetch(path, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${token}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    credentials: 'omit',
  });
  if (res.status === 401) throw session.end();
  const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
  if (!res.ok) {
    const detail = body && typeof body.detail === 'string' ? body.detail : body && typeof body.error === 'string' ? body.error : `HTTP ${res.status}`;
    throw new CallFailed(res.status, detail);
  }
  return body as T;
}

export interface QueryResult {
  rows: Array<Record<string, unknown>>;
  annotation: Record<string, unknown>;
}

/** The deployment's data API as the session's viewer: `/v1/load` for a semantic query, `/v1/sql` for a report's SQL. */
export async function query(session: EmbedSession, request: { sql: string } | { query: Record<string, unknown> }): Promise<QueryResult> {
  const { deployment_id: deploymentId, branch } = session.claims;
  const base = branch === null ? `/deployments/${deploymentId}/data-api/v1` : `/deployments/${deploymentId}/dev-mode/${encodeURIComponent(branch)}/data-api/v1`;
  for (;;) {
    const body =
      'sql' in request
        ? await call<Record<string, unknown>>(session, `${base}/sql`, { method: 'POST', body: { query: request.sql } })
        : await call<Record<string, unknown>>(session, `${base}/load`, { method: 'POST', body: { query: request.query } });
    // Cube's long-poll answer: ask again until the result is ready.
    if (body.error === 'Continue wait') continue;
    return { rows: (body.data as QueryResult['rows']) ?? [], annotation: (body.annotation as Record<string, unknown>) ?? {} };
  }
}

/** Compiled charts by their Vega-Lite spec's JSON: a spec is compiled once, however often its widget is re-queried. */
const compiled = new Map<string, Promise<Record<string, unknown>>>();
const COMPILED_KEPT = 64;

/**
 * The Vega spec of a chart's Vega-Lite spec, compiled by the server (`POST /api/v1/charts/compile`):
 * the page ships Vega alone. The spec names its data source and carries no rows. The same spec
 * (a filter changes the rows, not the spec) is asked for once; another one (the labels switch
 * changes the axis titles, a resize the size) is compiled anew. A failed compile is not kept.
 */
export function compileChart(session: EmbedSession, spec: Record<string, unknown>): Promise<Record<string, unknown>> {
  const key = JSON.stringify(spec);
  let vega = compiled.get(key);
  if (vega === undefined) {
    const asked = call<{ vega: Record<string, unknown> }>(session, '/api/v1/charts/compile', { method: 'POST', body: { spec } }).then((answer) => answer.vega);
    vega = asked;
    compiled.set(key, asked);
    asked.catch(() => compiled.get(key) === asked && compiled.delete(key));
    if (compiled.size > COMPILED_KEPT) compiled.delete(compiled.keys().next().value!);
  }
  return vega;
}

export { SessionEnded };
