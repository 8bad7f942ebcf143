import type { ModelArtifact } from '../../areas/data-model/validator/artifact.js';
import type { DataSource } from '../data-source.js';
import { NOBODY, type SecurityContext } from './access.js';
import { compileQuery } from './compile.js';
import { ModelIndex } from './members.js';
import { normaliseQuery, type QueryLimits } from './query.js';
import { annotationOf, rowsOf } from './results.js';

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
  compile(input: unknown, security: SecurityContext = NOBODY) {
    const query = normaliseQuery(input, this.limits);
    return { query, ...compileQuery(this.#index, query, this.dataSource.dialect, security) };
  }

  async load(input: unknown, security: SecurityContext = NOBODY) {
    const { query, sql, params, columns } = this.compile(input, security);
    const rows = await this.dataSource.query(sql, params);
    const segments = query.segments.map((s) => this.#index.resolve(s, 'segment', 'segments'));
    return { query, data: rowsOf(rows, columns), annotation: annotationOf(columns, segments) };
  }
}
