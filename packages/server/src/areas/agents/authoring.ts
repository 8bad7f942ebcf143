import { Ajv, type ValidateFunction } from 'ajv';
import type { Caller } from '../../access/caller.js';
import type { ToolSpec } from '../../ai/index.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../shared/json-depth.js';
import { ApiError } from '../../shared/problems.js';
import { randomId } from '../../shared/random-id.js';
import { contentSchemas, type DashboardConfigDraftInput } from '../workspace/index.js';

/**
 * The writes an agent may make for its asker, through the services a user's own request calls
 * (given by the module): whatever those refuse the user, they refuse the agent.
 */
export interface AuthoringServices {
  /** The reports service's upsert under a fresh public id: always a new report. */
  createReport(
    caller: Caller,
    deploymentId: number,
    publicId: string,
    input: { name: string; folderId: number | null; kind: 'table' | 'vega'; title: string; description: string | null; spec: Record<string, unknown> },
  ): Promise<{ id: number; name: string }>;
  /** The dashboards service's draft save. */
  saveDraft(caller: Caller, deploymentId: number, workbookId: number, input: { dashboardDraft: DashboardConfigDraftInput }): Promise<unknown>;
  /** The workbook as its reader sees it (VIEW), for the name a saved draft is shown under. */
  workbook(caller: Caller, deploymentId: number, workbookId: number): Promise<{ id: number; name: string }>;
}

export const AUTHORING_TOOLS: ToolSpec[] = [
  {
    name: 'save_report',
    description:
      'Saves a report in the user’s workspace, only when the user asks for one: its name, and the query of the last run_query (or the query you give). Answers the new report’s id.',
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 255 },
        description: { type: 'string' },
        folderId: { type: 'integer', minimum: 1, description: 'The folder to save it in; left out: the workspace root.' },
        query: { type: 'object', description: 'A Cube REST query; left out: the last run_query’s.' },
      },
      required: ['name'],
    },
  },
  {
    name: 'save_dashboard_draft',
    description:
      'Saves the dashboard draft of a workbook, only when the user asks for one: it replaces the workbook’s draft. Widgets of type CHART show a report through config.reportId; each has a position {x, y, w, h} on a 12-column grid.',
    parameters: {
      type: 'object',
      properties: {
        workbookId: { type: 'integer', minimum: 1 },
        dashboardDraft: {
          type: 'object',
          properties: {
            title: { type: 'string' },
            widgets: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  type: { type: 'string' },
                  position: { type: 'object' },
                  config: { type: 'object' },
                },
                required: ['type', 'position'],
              },
            },
          },
        },
      },
      required: ['workbookId', 'dashboardDraft'],
    },
  },
];

export const AUTHORING_TOOL_NAMES = new Set(AUTHORING_TOOLS.map((t) => t.name));

/** Said after the preamble when the authoring tools are offered. */
export const AUTHORING_NOTE =
  'You may also save a report (save_report) or a workbook’s dashboard draft (save_dashboard_draft), but only when the user asks you to save something; saving is done as the user, with their access.';

let draftValidator: ValidateFunction | null = null;

/**
 * The draft route's own body schema (DashboardConfigDraftInput and the schemas it refers to),
 * compiled once per process: a draft the route would refuse is refused here too, since the
 * service trusts its route to have checked it.
 */
function validDraft(): ValidateFunction {
  if (draftValidator === null) {
    const ajv = new Ajv({ strict: false, validateFormats: false, schemas: contentSchemas as object[] });
    draftValidator = ajv.getSchema('DashboardConfigDraftInput') ?? null;
    if (draftValidator === null) throw new Error('DashboardConfigDraftInput is not among the content schemas.');
  }
  return draftValidator;
}

const refuse = (detail: string) => new ApiError('VALIDATION_FAILED', detail);

/** The report's content: its semantic query in `spec.query`, and the chart drawn from it, if any, as `spec.vegaLite` (what renders read). */
export function reportInput(
  args: Record<string, unknown>,
  query: Record<string, unknown>,
  chart: Record<string, unknown> | null,
): { name: string; folderId: number | null; kind: 'table' | 'vega'; title: string; description: string | null; spec: Record<string, unknown> } {
  const { name, description, folderId } = args;
  if (typeof name !== 'string' || name.length > 255 || !/\S/.test(name)) refuseWith('name must be 1 to 255 characters, not only spaces.');
  if (description !== undefined && typeof description !== 'string') refuseWith('description must be a string.');
  if (folderId !== undefined && folderId !== null && !(Number.isSafeInteger(folderId) && (folderId as number) > 0))
    refuseWith('folderId must be a folder’s id, or left out for the workspace root.');
  if (nestsDeeperThan(query, MAX_JSON_DEPTH)) refuseWith(`the query nests deeper than ${MAX_JSON_DEPTH} levels.`);
  let vegaLite: Record<string, unknown> | null = null;
  if (chart !== null) {
    // The rows were the asker's at the time: the report keeps the chart's form, and each viewer's run fills it.
    const { data: _rows, ...form } = chart;
    vegaLite = form;
  }
  return {
    name: name as string,
    folderId: (folderId as number | undefined) ?? null,
    kind: vegaLite === null ? 'table' : 'vega',
    title: name as string,
    description: (description as string | undefined) ?? null,
    spec: vegaLite === null ? { query } : { query, vegaLite },
  };
}

function refuseWith(detail: string): never {
  throw refuse(`The report was not saved: ${detail}`);
}

/** The draft save's arguments, checked as the route checks its body. */
export function draftInput(args: Record<string, unknown>): { workbookId: number; dashboardDraft: DashboardConfigDraftInput } {
  const { workbookId, dashboardDraft } = args;
  if (!(Number.isSafeInteger(workbookId) && (workbookId as number) > 0)) throw refuse('The draft was not saved: workbookId must be a workbook’s id.');
  if (dashboardDraft === null || typeof dashboardDraft !== 'object' || Array.isArray(dashboardDraft))
    throw refuse('The draft was not saved: dashboardDraft must be a dashboard config (an object with widgets).');
  if (nestsDeeperThan(dashboardDraft, MAX_JSON_DEPTH)) throw refuse(`The draft was not saved: it nests deeper than ${MAX_JSON_DEPTH} levels.`);
  const check = validDraft();
  if (!check(dashboardDraft)) {
    // Nullable fields fail twice (the value's own schema, and "must be null"): the deepest error says what is wrong.
    const deepest = [...(check.errors ?? [])].filter((e) => e.keyword !== 'anyOf').sort((x, y) => y.instancePath.length - x.instancePath.length)[0];
    throw refuse(`The draft was not saved: ${deepest ? `${deepest.instancePath || '/'} ${deepest.message ?? ''}` : 'it is not a dashboard config'}.`);
  }
  return { workbookId: workbookId as number, dashboardDraft: dashboardDraft as DashboardConfigDraftInput };
}

/** A report's public id: random, so an agent's save always creates and never overwrites a report by chance. */
export const newReportPublicId = (): string => `agent-${randomId(12)}`;
