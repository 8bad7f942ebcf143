import { Type, type Static } from 'typebox';

/** The largest body of `POST /api/v1/charts/compile` (bytes of JSON): a chart's spec, never its rows. */
export const COMPILE_BODY_LIMIT = 64 * 1024;

export const CompileChartBody = Type.Object(
  {
    spec: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'A Vega-Lite top-level spec. Its data is a named source at most (`data: { name }`), whose rows the caller puts into the compiled spec; no `values`, `url` or `datasets`, and no `data` below the top.',
      },
    ),
  },
  { additionalProperties: false },
);
export type CompileChartInput = Static<typeof CompileChartBody>;

export const CompiledChartSchema = Type.Object(
  {
    vega: Type.Object(
      {},
      {
        additionalProperties: true,
        description: 'The Vega spec Vega-Lite compiled it to. The named source is a dataset of the same name with no values: the caller sets its `values`.',
      },
    ),
  },
  { $id: 'CompiledChart' },
);
export type CompiledChart = Static<typeof CompiledChartSchema>;

export const chartSchemas = [CompiledChartSchema];
