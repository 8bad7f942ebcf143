import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { COMPILE_BODY_LIMIT, CompileChartBody } from './charts.schemas.js';
import { MAX_CHART_VIEWS } from '../../render/chart-spec.js';
import type { ChartsService } from './charts.service.js';

/** `POST /api/v1/charts/compile` (extension): a Vega-Lite spec compiled to Vega, for pages that draw charts with Vega alone. */
export function chartsRoutes(charts: ChartsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/charts/compile',
      {
        bodyLimit: COMPILE_BODY_LIMIT,
        // An embed token opens it too: the embedded dashboard page compiles its charts here.
        config: { credential: 'embed' },
        schema: {
          operationId: 'compileChart',
          extension: true,
          tags: ['Dashboards'],
          summary: 'Extension: a Vega-Lite spec compiled to Vega (any authenticated caller, embed tokens included)',
          description:
            'An extension beyond the reference. The embedded dashboard page sends each chart’s Vega-Lite spec here without its rows and draws the answer with Vega, so viewers’ browsers never load Vega-Lite. ' +
            'The spec’s data is a named source at most (`data: { name }`); the answer’s Vega spec has a dataset of that name with no values, and the caller sets its `values` to the rows. ' +
            `400 \`VALIDATION_FAILED\` for a spec with \`data.values\`, \`data.url\`, another data field, \`datasets\`, \`data\` below the top level, unbounded generation (as the dashboard renders refuse it), more than ${MAX_CHART_VIEWS} views, or one Vega-Lite cannot compile (its message in \`detail\`); 413 past ${COMPILE_BODY_LIMIT / 1024} KiB of JSON. ` +
            'Answers are remembered per account and spec, so the charts of a dashboard are compiled once for all its viewers.',
          body: CompileChartBody,
          response: { 200: Type.Ref('CompiledChart') },
        },
      },
      async (request) => charts.compile(request.tenant.id, request.body.spec as Record<string, unknown>),
    );
  };
}
