import { Type, type Static } from 'typebox';
import { Id, Nullable } from '../../shared/schemas.js';

/** The most characters of SQL a run takes: a report's query with a dashboard's filters applied. */
export const SQL_MAX_LENGTH = 100_000;

/** Reference 3.7 EmbedPythonFilteredRunInput: all required. */
export const EmbedPythonFilteredRunInputSchema = Type.Object(
  {
    reportId: Id,
    reportVersionId: { ...Id, description: 'The id of one of the dashboard’s published report snapshots (`reportSnapshots[].id`), of this report.' },
    sqlQuery: Type.String({
      minLength: 1,
      maxLength: SQL_MAX_LENGTH,
      description: 'The report’s query with the dashboard’s filters and time grains applied; run through the data API’s /v1/sql as the calling embed user.',
    }),
  },
  { $id: 'EmbedPythonFilteredRunInput', additionalProperties: false },
);
export type EmbedPythonFilteredRunInput = Static<typeof EmbedPythonFilteredRunInputSchema>;

/** Reference 3.7 PythonAnalysisFilteredRun. */
export const PythonAnalysisFilteredRunSchema = Type.Object(
  {
    at: Type.String({ format: 'date-time', description: 'When the code ran (a cached answer keeps the time of the run it repeats).' }),
    stdout: Type.String(),
    stderr: Type.String(),
    inputRowCount: Type.Integer({ minimum: 0, description: 'The rows the query answered, handed to the code as `rows`.' }),
    executionError: Type.Optional(
      Nullable(Type.String({ description: 'The code’s traceback, or why it was stopped (time or memory limit); null when it ran through.' })),
    ),
    outputData: Type.Optional(
      Type.Unknown({ description: 'The code’s `output` variable, else the value of its last expression, as JSON; null when there is none.' }),
    ),
  },
  { $id: 'PythonAnalysisFilteredRun' },
);
export type PythonAnalysisFilteredRun = Static<typeof PythonAnalysisFilteredRunSchema>;

export const pythonRunSchemas = [EmbedPythonFilteredRunInputSchema, PythonAnalysisFilteredRunSchema];
