import { Ajv, type ValidateFunction } from 'ajv';
import { Type } from 'typebox';
import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { ReportRow } from '../../db/tables.js';
import { applyEdits, documentErrors, parseEditedText, requireCurrentHash, textFileOf, type TextEditInput, type TextFile } from '../../shared/canonical-text.js';
import { MAX_JSON_DEPTH } from '../../shared/json-depth.js';
import { ApiError } from '../../shared/problems.js';
import { contentSchemas, ItemName, openWorkspace, parseJson, readAuthorized } from '../workspace/index.js';
import { CONTENT_FIELDS, UpsertReportBody, type ReportContent, type UpsertReportInput } from './reports.schemas.js';
import type { ReportsService } from './reports.service.js';

/**
 * A report as canonical text (shared/canonical-text.ts): its name and content fields, every one
 * present (null when empty). Where it sits (folder), who owns it and its placements are not in the
 * text: they have their own operations.
 */
type ReportDocument = { name: string } & ReportContent;

function documentOf(row: ReportRow): ReportDocument {
  return {
    name: row.name,
    kind: row.kind as ReportDocument['kind'],
    title: row.title,
    description: row.description,
    sqlQuery: row.sql_query,
    pythonCode: row.python_code,
    spec: parseJson(row.spec) as ReportDocument['spec'],
    meta: parseJson(row.meta) as ReportDocument['meta'],
    preferences: parseJson(row.preferences) as ReportDocument['preferences'],
    periodComparisons: parseJson(row.period_comparisons) as ReportDocument['periodComparisons'],
    fillMissingRows: parseJson(row.fill_missing_rows) as ReportDocument['fillMissingRows'],
  };
}

/** The update body's own fields, less those that are not the report's text (`folderId`, `expectedVersion`). */
const { folderId: _folderId, expectedVersion: _expectedVersion, ...documentFields } = UpsertReportBody.properties;
const ReportDocumentSchema = Type.Object({ ...documentFields, name: ItemName }, { additionalProperties: false });

let validator: ValidateFunction | null = null;
/** Compiled once per process, against the same shared schemas as the route's body. */
function validDocument(): ValidateFunction {
  validator ??= new Ajv({ strict: false, allErrors: true, validateFormats: false, schemas: contentSchemas as object[] }).compile(ReportDocumentSchema);
  return validator;
}

/** The edited text as the update's input: every content field it leaves out is cleared, as the text is the whole report. */
function inputOf(text: string): UpsertReportInput {
  // The document itself, then an open field (spec, meta) nesting as deep as a body may.
  const value = parseEditedText(text, MAX_JSON_DEPTH + 1);
  const check = validDocument();
  if (!check(value)) {
    const errors = documentErrors(check.errors ?? []);
    throw new ApiError(
      'VALIDATION_FAILED',
      `The edited text is not a valid report: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}. Nothing was written.`,
      { errors },
    );
  }
  const document = value as Partial<ReportDocument> & { name: string };
  const input: Record<string, unknown> = { name: document.name };
  for (const field of CONTENT_FIELDS) input[field] = document[field] ?? null;
  return input as UpsertReportInput;
}

/**
 * Canonical-text editing of a report (an extension): read it as text with its hash (VIEW), and
 * replace exact text in it (EDIT), checked and written by the report update itself.
 */
export function reportFileService(store: Store, reports: Pick<ReportsService, 'updateById'>) {
  const { db } = store;
  return {
    /** The report as canonical text (VIEW on it). Reading the text does not count as viewing the report. */
    async read(caller: Caller, deploymentId: number, reportId: number): Promise<TextFile> {
      const context = await openWorkspace(db, caller, deploymentId);
      const read = await readAuthorized(db, store.dialect, context, 'REPORT', reportId, 'VIEW', 'view');
      return textFileOf(documentOf(read.item.row as ReportRow));
    },

    /**
     * Applies the edits to the text of `hash` and saves the result as the report's update: 409 when
     * the report's text is no longer that one, 400 when an edit does not match exactly once or the
     * result is not a valid report. The hash is compared under the update's lock, so of two edits
     * made against the same text, the second finds it changed.
     */
    async edit(caller: Caller, deploymentId: number, reportId: number, input: TextEditInput): Promise<TextFile> {
      const row = await reports.updateById(caller, deploymentId, reportId, (current) => {
        const file = textFileOf(documentOf(current));
        requireCurrentHash(file, input.hash, `Report ${reportId}`);
        const edited = inputOf(applyEdits(file.content, input.edits));
        // The same report written otherwise (spacing, key order) is no update: its stored JSON keeps its own key order.
        return textFileOf(edited).hash === file.hash ? { name: current.name } : edited;
      });
      return textFileOf(documentOf(row));
    },
  };
}
export type ReportFileService = ReturnType<typeof reportFileService>;
