import type { ModelArtifact } from '../../areas/data-model/validator/artifact.js';
import type { DataSource } from '../data-source.js';
import { compileQuery } from './compile.js';
import { QueryError } from './errors.js';
import { ModelIndex } from './members.js';
import { normaliseQuery, type QueryLimits } from './query.js';
import { annotationOf, rowsOf } from './results.js';
import { translateSql } from './sql-api.js';

/**
 * `/v1/load`: a JSON query → `{query, data, annotation}`: normalised, compiled against the build's
 * model for the data source's dialect, run with its parameters bound.
 */
export class QueryEngine {
  readonly #index: ModelIndex;

  constructor(
    artifact: ModelArtifact,
    private readonly dataSource: DataSource,
    private readonly limits: QueryLimits,
  ) {
    this.#index = new ModelIndex(artifact);
  }

  /** The SQL a query compiles to, without running it (`/v1/sql`-style inspection and tests). */
  compile(input: unknown) {
    const query = normaliseQuery(input, this.limits);
    return { query, ...compileQuery(this.#index, query, this.dataSource.dialect) };
  }

  async load(input: unknown) {
    const { query, sql, params, columns } = this.compile(input);
    const rows = await this.dataSource.query(sql, params);
    const segments = query.segments.map((s) => this.#index.resolve(s, 'segment', 'segments'));
    return { query, data: rowsOf(rows, columns), annotation: annotationOf(columns, segments) };
  }

  /**
   * `/v1/sql`: one SELECT over a cube or a view, translated into a query (sql-api.ts) and loaded as
   * above; rows keyed by the SELECT's column names, `annotation.columns` saying what each one is.
   */
  async sql(text: unknown) {
    if (typeof text !== 'string') throw new QueryError('The body must be {"query": "<SQL>"}, the SQL as a string.');
    const { query: input, columns } = translateSql(text, this.#index);
    const { query, data, annotation } = await this.load(input);
    const info = (key: string) => annotation.measures[key] ?? annotation.dimensions[key] ?? annotation.timeDimensions[key];
    return {
      query,
      data: data.map((row) => Object.fromEntries(columns.map((c) => [c.name, row[c.key]]))),
      annotation: { ...annotation, columns: Object.fromEntries(columns.map((c) => [c.name, { member: c.key, kind: c.kind, ...info(c.key) }])) },
    };
  }
}
