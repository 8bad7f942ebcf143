import type { ModelArtifact } from '../model/artifact.js';
import { metaOf } from './meta.js';
import { QUERY_TIMEOUT_TYPE, timeoutMessage } from './protocol.js';
import type { SecurityContext } from './query/access.js';
import { cubeQuery, type CubeQuery } from './query/cube-query.js';
import { QueryError } from './query/errors.js';
import type { Answer, QueryEngine } from './query/load.js';
import type { Query } from './query/query.js';

/**
 * The data API of one build, in Cube's REST protocol (`/cubejs-api/v1` of Cube, served at each
 * environment's data-API URL), so Cube's clients (`@cubejs-client/core`) work unchanged:
 *
 * - `/v1/load` (GET `?query=`, POST `{query}`): one query or a list, with `queryType=multi` the
 *   envelope `{queryType, results, pivotQuery, slowQuery}`, without it the one result; a query
 *   with `compareDateRange` is one query per range; a list is Cube's data blending.
 * - `/v1/sql`: the SQL a JSON query compiles to; `POST {query: "<SQL>"}` still runs SQL over
 *   cubes (this product's earlier spelling of `/v1/cubesql`).
 * - `/v1/dry-run`: the normalised queries and the pivot query, nothing run.
 * - `/v1/cubesql`: SQL over cubes, answered as Cube streams it (a schema line, then data lines).
 * - `/v1/meta`: the cubes and views the caller may see.
 *
 * A query still running after `continueWaitMs` is answered 200 `{"error": "Continue wait"}`, as
 * Cube does: the client asks again, and the same request then waits on the same run.
 * Refusals are `{error}` (and `type: "UserError"` for a malformed query) with Cube's statuses.
 */

/** A data-API request, whichever way it came (HTTP from the proxy, or the parent's IPC channel). */
export interface DataApiRequest {
  method: string;
  /** `/v1/load`, `/v1/sql`, `/v1/meta`, ... */
  path: string;
  /** The query string, without its `?`. */
  search: string;
  privateMeta: boolean;
  security: SecurityContext;
  /** The JSON body of a POST. */
  body: () => Promise<unknown>;
}

/** The status and the JSON text (`/v1/cubesql`: newline-delimited JSON, with the same content type, as Cube sends it). */
export interface DataApiAnswer {
  status: number;
  text: string;
}

/** A request the runtime cannot read (body too large, not JSON). */
export class BodyError extends Error {}

export interface RestOptions {
  /** How long a request waits for its queries before answering "Continue wait". */
  continueWaitMs: number;
  /** The data source's kind, as `dbType` of a result (`postgres`, `sqlite`). */
  dbType: string;
  /**
   * QUERY_MAX_RESULT_BYTES for a whole answer: the engine holds each query to it, and a request of
   * several (a list, compared ranges) is held to it too, as the sum of its results' rows.
   */
  maxResultBytes?: number;
  /** QUERY_TIMEOUT_MS, to name it when the data source stops a statement at it (PostgreSQL's 57014). */
  timeoutMs?: number;
}

const size = (bytes: number) =>
  bytes >= 1_048_576 ? `${(bytes / 1_048_576).toFixed(1)} MiB` : bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${bytes} bytes`;

type QueryType = 'regularQuery' | 'compareDateRangeQuery' | 'blendingQuery';

const CONTINUE_WAIT = 'Continue wait';
/** How long a run that outlived its request is kept for the client's next ask. */
const KEEP_FINISHED_MS = 60_000;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function parseJson(text: string, what = 'The query'): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BodyError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Refuses a NUL character anywhere in `value`, naming where: no data source takes one (PostgreSQL
 * refuses the parameter, SQLite cuts the text), so it is the query's fault, said before it runs.
 * The server refuses one in a JSON body; a query string (`?query=`, `%00` or `\u0000`) gets here.
 */
function refuseNul(value: unknown, name: string): void {
  const stack: Array<[unknown, string]> = [[value, name]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) throw new QueryError(`${path} holds a NUL character (U+0000), which a query may not hold.`);
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push([item, `${path}[${i}]`]));
    } else if (isObject(v)) {
      for (const [k, item] of Object.entries(v)) {
        if (k.includes('\u0000')) throw new QueryError(`${path} has a key that holds a NUL character (U+0000), which a query may not hold.`);
        stack.push([item, `${path}.${k}`]);
      }
    }
  }
}

/** The request's parameters, from the query string (GET) or the JSON body (POST); JSON-encoded values decoded. */
async function paramsOf(request: DataApiRequest): Promise<Record<string, unknown>> {
  if (request.method === 'GET') {
    const params = Object.fromEntries(new URLSearchParams(request.search));
    for (const [key, value] of Object.entries(params)) refuseNul(value, key);
    return params;
  }
  const body = await request.body();
  if (!isObject(body)) throw new BodyError('The body must be a JSON object such as {"query": {...}}.');
  for (const [key, value] of Object.entries(body)) refuseNul(value, key);
  return body;
}

/** The `query` parameter: an object or a list of them, sent as JSON text or as JSON (or, posted, the query itself as the body). */
function queryParam(params: Record<string, unknown>): unknown {
  if (params.query === undefined && ('measures' in params || 'dimensions' in params || 'timeDimensions' in params)) return params;
  const raw = params.query;
  if (raw === undefined || raw === null || raw === 'undefined' || raw === '') throw new QueryError('Query param is required');
  if (typeof raw !== 'string') return raw;
  const parsed = parseJson(raw, 'The query param');
  // `\u0000` written as an escape in the JSON text.
  refuseNul(parsed, 'query');
  return parsed;
}

/**
 * The queries a request stands for: a list is a blending query, a query whose time dimension has
 * `compareDateRange` is one query per range (that range as its `dateRange`), anything else itself.
 */
function expand(input: unknown): { queryType: QueryType; inputs: unknown[] } {
  if (Array.isArray(input)) {
    if (input.length === 0) throw new QueryError('The list of queries is empty.');
    if (input.length > 20) throw new QueryError('A request may hold at most 20 queries.');
    return { queryType: input.length === 1 ? 'regularQuery' : 'blendingQuery', inputs: input };
  }
  if (!isObject(input) || !Array.isArray(input.timeDimensions)) return { queryType: 'regularQuery', inputs: [input] };
  const timeDimensions = input.timeDimensions as unknown[];
  const comparing = timeDimensions.map((td, i) => [td, i] as const).filter(([td]) => isObject(td) && td.compareDateRange !== undefined);
  if (comparing.length === 0) return { queryType: 'regularQuery', inputs: [input] };
  if (comparing.length > 1) throw new QueryError('compareDateRange can only exist for one timeDimension');
  const [td, at] = comparing[0]! as [Record<string, unknown>, number];
  const ranges = td.compareDateRange;
  if (!Array.isArray(ranges) || ranges.length === 0 || ranges.length > 20)
    throw new QueryError(`timeDimensions[${at}].compareDateRange must be a list of 1 to 20 date ranges.`);
  if (td.dateRange !== undefined) throw new QueryError(`timeDimensions[${at}] has both dateRange and compareDateRange: give one.`);
  return {
    queryType: 'compareDateRangeQuery',
    inputs: ranges.map((range) => {
      const { compareDateRange: _ranges, ...rest } = td;
      return { ...input, timeDimensions: timeDimensions.map((other, i) => (i === at ? { ...rest, dateRange: range } : other)) };
    }),
  };
}

/** Cube's rule for blending: every query has a time dimension by the same granularity. */
function checkBlending(queries: Query[]): string {
  const granularities = queries.map((q) => q.timeDimensions.find((td) => td.granularity)?.granularity);
  if (granularities.some((g) => g === undefined)) throw new QueryError('Data blending query without granularity is not supported');
  if (new Set(granularities).size > 1) throw new QueryError('Data blending query granularities must match');
  return granularities[0]!;
}

/** Cube's pivot query: the first query with the type, the compared ranges as a dimension, or the blended members. */
function pivotQueryOf(queryType: QueryType, echoes: CubeQuery[], granularity?: string): Record<string, unknown> {
  const [first] = echoes as [CubeQuery];
  if (queryType === 'compareDateRangeQuery') return { ...first, dimensions: ['compareDateRange', ...first.dimensions], queryType };
  if (queryType === 'blendingQuery') {
    const union = (pick: (q: CubeQuery) => string[]) => [...new Set(echoes.flatMap(pick))];
    return {
      ...first,
      measures: union((q) => q.measures),
      dimensions: union((q) => q.dimensions),
      timeDimensions: [{ dimension: 'time', granularity }],
      queryType,
    };
  }
  return { ...first, queryType };
}

/** One result as Cube's `/v1/load` writes it, its rows' JSON text reused as it is. */
function resultText(answer: Answer, dbType: string, extraRows?: (rows: Array<Record<string, unknown>>) => Array<Record<string, unknown>>): string {
  const { prepared } = answer;
  const data = extraRows ? JSON.stringify(extraRows(answer.rows)) : answer.json;
  const total = answer.total === undefined ? '' : `,"total":${answer.total}`;
  // Cube's record of the pre-aggregation tables the rows were read from.
  const used = answer.usedPreAggregations
    ? `,"usedPreAggregations":${JSON.stringify(Object.fromEntries(answer.usedPreAggregations.map((u) => [u.table, { targetTableName: u.table, refreshKeyValues: u.refreshValue === null ? [] : [JSON.parse(u.refreshValue) as unknown], lastUpdatedAt: u.builtAt }])))}`
    : '';
  return (
    `{"query":${prepared.queryJson},"lastRefreshTime":"${new Date(answer.refreshedAt).toISOString()}","annotation":${prepared.annotationJson},` +
    `"dataSource":"default","dbType":${JSON.stringify(dbType)},"extDbType":"cubestore","external":false,"slowQuery":false${total}${used},"data":${data}}`
  );
}

/** Cube's column types for `/v1/cubesql`'s schema line. */
function columnType(type: string | null | undefined, kind: string): string {
  if (type === 'time') return 'Timestamp';
  if (type === 'boolean') return 'Boolean';
  if (type === 'string') return 'String';
  if (kind === 'measure' && (type === 'count' || type === 'count_distinct' || type === 'count_distinct_approx')) return 'Int64';
  if (type === 'number' || kind === 'measure') return 'Float64';
  return 'String';
}

/**
 * The members `/v1/meta` hides from a caller without private access: those of cubes and views
 * that are not public, and those not public themselves (a primary key is private unless it says
 * `public: true`).
 */
function hiddenMembers(artifact: ModelArtifact): Set<string> {
  const hidden = new Set<string>();
  for (const cube of artifact.cubes)
    for (const m of [...cube.measures, ...cube.dimensions]) if (!cube.public || !m.public) hidden.add(`${cube.name}.${m.name}`);
  for (const view of artifact.views) for (const m of view.members) if (!view.public || !m.public) hidden.add(`${view.name}.${m.name}`);
  return hidden;
}

/**
 * Cube's rule for hidden members: a member `/v1/meta` hides from the caller may not be among a
 * loaded result's columns (a measure, a dimension, a time dimension with a granularity); it may
 * still filter, order or bound a date range. Cube lifts the rule where its meta shows hidden members
 * (dev mode, the playground's secret); here, for callers whose meta shows them (`meta-private`).
 * Unknown names are left to the compiler, which names them.
 */
function refuseHidden(query: Query, hidden: Set<string>): void {
  const columns = [...query.measures, ...query.dimensions, ...query.timeDimensions.filter((td) => td.granularity !== undefined).map((td) => td.dimension)];
  const found = columns.find((name) => hidden.has(name));
  if (found !== undefined) {
    throw new QueryError(
      `You requested hidden member: '${found}'. Please make it visible using \`public: true\`. Please note primaryKey fields are \`public: false\` by default: https://cube.dev/docs/schema/reference/joins#setting-a-primary-key.`,
    );
  }
}

export function restApi(artifact: ModelArtifact, engine: QueryEngine, options: RestOptions) {
  const hidden = hiddenMembers(artifact);
  /** Runs that outlived the request that started them, by request; the client's next ask takes them. */
  const runs = new Map<string, { promise: Promise<string>; done: boolean }>();

  /**
   * Runs `work` for the request `key`, or joins the run already going for it. Answers its text,
   * or null when it is still running after `continueWaitMs` (the client is told to ask again).
   */
  async function withinWait(key: string, work: () => Promise<string>): Promise<string | null> {
    let run = runs.get(key);
    if (!run) {
      const started = { promise: work(), done: false };
      run = started;
      runs.set(key, started);
      // A run nobody comes back for is forgotten a while after it ends.
      started.promise
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => {
          started.done = true;
          setTimeout(() => runs.get(key) === started && runs.delete(key), KEEP_FINISHED_MS).unref();
        });
    }
    const current = run;
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      current.promise.then(
        (text) => ({ text }),
        (error: unknown) => ({ error }),
      ),
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), options.continueWaitMs))),
    ]).finally(() => clearTimeout(timer));
    if (waited === null) return null;
    if (runs.get(key) === current) runs.delete(key);
    if ('error' in waited) throw waited.error;
    return waited.text;
  }

  async function load(request: DataApiRequest): Promise<DataApiAnswer> {
    const params = await paramsOf(request);
    const multi = params.queryType === 'multi';
    const { queryType, inputs } = expand(queryParam(params));
    if (queryType !== 'regularQuery' && !multi) throw new QueryError(`'${queryType}' query type is not supported by the client.Please update the client.`);
    const queries = inputs.map((input) => engine.normalise(input));
    if (!request.privateMeta) for (const query of queries) refuseHidden(query, hidden);
    const granularity = queryType === 'blendingQuery' ? checkBlending(queries) : undefined;
    const key = JSON.stringify([multi, queries, request.security]);
    const text = await withinWait(key, async () => {
      const answers = await Promise.all(queries.map((query) => engine.answer(query, request.security)));
      if (answers.length > 1 && options.maxResultBytes !== undefined) {
        // Each answer is within the limit (the engine's check); together they may not be either.
        const chars = answers.reduce((n, a) => n + a.json.length, 0);
        const bytes = chars * 3 <= options.maxResultBytes ? chars : answers.reduce((n, a) => n + Buffer.byteLength(a.json), 0);
        if (bytes > options.maxResultBytes) {
          throw new QueryError(
            `The ${answers.length} results are ${size(bytes)} in all, more than the ${size(options.maxResultBytes)} a request may return: add filters, fewer dimensions, fewer ranges or queries, or a limit.`,
          );
        }
      }
      const results = answers.map((answer) => {
        // Rows of a compared range say which range; blended rows carry their time as `time.<granularity>`.
        if (queryType === 'compareDateRangeQuery') {
          const range = answer.query.timeDimensions.find((td) => td.dateRange)?.dateRange?.join(' - ');
          return resultText(answer, options.dbType, (rows) => rows.map((row) => ({ ...row, compareDateRange: range })));
        }
        if (queryType === 'blendingQuery') {
          const td = answer.query.timeDimensions.find((t) => t.granularity)!;
          const timeKey = `${td.dimension}.${td.granularity}`;
          return resultText(answer, options.dbType, (rows) => rows.map((row) => ({ ...row, [`time.${granularity}`]: row[timeKey] })));
        }
        return resultText(answer, options.dbType);
      });
      if (!multi) return results[0]!;
      const pivotQuery = pivotQueryOf(
        queryType,
        answers.map((a) => a.prepared.echo),
        granularity,
      );
      return `{"queryType":"${queryType}","results":[${results.join(',')}],"pivotQuery":${JSON.stringify(pivotQuery)},"slowQuery":false}`;
    });
    return text === null ? { status: 200, text: JSON.stringify({ error: CONTINUE_WAIT }) } : { status: 200, text };
  }

  /** `/v1/sql` of a JSON query (or queries): the statement each compiles to for the caller, nothing run. */
  async function sqlOf(request: DataApiRequest, params: Record<string, unknown>): Promise<DataApiAnswer> {
    const { queryType, inputs } = expand(queryParam(params));
    const described = inputs.map((input) => {
      const plan = engine.plan(engine.normalise(input), request.security);
      const order = Object.fromEntries(plan.order);
      const time = plan.columns.find((c) => c.granularity);
      return {
        sql: {
          sql: [plan.sql, plan.params],
          ...(time ? { timeDimensionAlias: time.alias, timeDimensionField: time.keys[1] } : {}),
          order,
          cacheKeyQueries: [],
          preAggregations: [],
          dataSource: 'default',
          aliasNameToMember: Object.fromEntries(plan.columns.map((c) => [c.alias, c.keys[0]])),
          external: false,
        },
        dataSource: 'default',
      };
    });
    return { status: 200, text: JSON.stringify(queryType === 'regularQuery' ? described[0] : described) };
  }

  /** `/v1/dry-run`: the normalised queries, their order and the pivot query. */
  async function dryRun(request: DataApiRequest): Promise<DataApiAnswer> {
    const { queryType, inputs } = expand(queryParam(await paramsOf(request)));
    const queries = inputs.map((input) => engine.normalise(input));
    const granularity = queryType === 'blendingQuery' ? checkBlending(queries) : undefined;
    const plans = queries.map((query) => engine.plan(query, request.security));
    const normalizedQueries = queries.map((query) => cubeQuery(query));
    return {
      status: 200,
      text: JSON.stringify({
        queryType,
        normalizedQueries,
        queryOrder: plans.map((plan) => Object.fromEntries(plan.order)),
        transformedQueries: plans.map(() => false),
        pivotQuery: pivotQueryOf(queryType, normalizedQueries, granularity),
      }),
    };
  }

  /** `/v1/cubesql`: SQL over cubes, answered as Cube streams it (newline-delimited JSON: the schema, then the rows as lists of text). */
  async function cubeSql(request: DataApiRequest): Promise<DataApiAnswer> {
    const params = await paramsOf(request);
    if (typeof params.query !== 'string') throw new QueryError('The body must be {"query": "<SQL>"}, the SQL as a string.');
    const answer = await engine.sql(params.query, request.security);
    const columns = Object.entries(answer.annotation.columns);
    const schema = columns.map(([name, c]) => ({ name, column_type: columnType(engine.typeOf(c.member), c.kind) }));
    const text = (v: unknown) => (v === null || v === undefined ? null : typeof v === 'string' ? v : String(v));
    const data = answer.data.map((row) => columns.map(([name]) => text(row[name])));
    return { status: 200, text: `${JSON.stringify({ schema, lastRefreshTime: new Date().toISOString() })}\n${JSON.stringify({ data })}\n` };
  }

  const failed = (status: number, error: string, type?: string) => ({ status, text: JSON.stringify(type ? { type, error } : { error }) });

  return async (request: DataApiRequest): Promise<DataApiAnswer> => {
    const { method, path, security } = request;
    const readable = method === 'GET' || method === 'POST';
    try {
      if (method === 'GET' && path === '/v1/meta') return { status: 200, text: JSON.stringify(metaOf(artifact, request.privateMeta, security)) };
      if (readable && path === '/v1/load') return await load(request);
      if (readable && path === '/v1/sql') {
        const params = await paramsOf(request);
        // `{query: "<SQL>"}`: SQL over cubes, as this product first served it (now also `/v1/cubesql`).
        if (method === 'POST' && typeof params.query === 'string' && !/^\s*[[{]/.test(params.query))
          return { status: 200, text: JSON.stringify(await engine.sql(params.query, security)) };
        return await sqlOf(request, params);
      }
      if (readable && path === '/v1/dry-run') return await dryRun(request);
      if (method === 'POST' && path === '/v1/cubesql') return await cubeSql(request);
      // This product's extension: each pre-aggregation's table and its state, for tokens that see the model whole.
      if (method === 'GET' && path === '/v1/pre-aggregations') {
        if (!request.privateMeta) return failed(403, 'Listing pre-aggregations needs a token with the meta-private scope (or an API key).');
        return { status: 200, text: JSON.stringify({ preAggregations: engine.preAggregations.state() }) };
      }
      return failed(404, `${method} ${path} is not part of this runtime's data API.`);
    } catch (error) {
      if (error instanceof QueryError) return error.status === 400 ? failed(400, error.message, 'UserError') : failed(error.status, error.message);
      if (error instanceof BodyError) return failed(400, error.message, 'UserError');
      // PostgreSQL stopped the statement at its statement_timeout, QUERY_TIMEOUT_MS.
      if ((error as { code?: unknown }).code === '57014') return failed(400, timeoutMessage(options.timeoutMs), QUERY_TIMEOUT_TYPE);
      // The data source refused the compiled statement (a table the model names is missing).
      return failed(400, `The data source refused the query: ${(error as Error).message}`);
    }
  };
}
