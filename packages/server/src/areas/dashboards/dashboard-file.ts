import { Ajv, type ValidateFunction } from 'ajv';
import type { Caller } from '../../access/caller.js';
import { applyEdits, documentErrors, parseEditedText, requireCurrentHash, textFileOf, type TextEditInput, type TextFile } from '../../shared/canonical-text.js';
import { MAX_JSON_DEPTH } from '../../shared/json-depth.js';
import { ApiError } from '../../shared/problems.js';
import { contentSchemas, type DashboardConfigDraftInput } from '../workspace/index.js';
import type { DashboardsService } from './dashboards.service.js';

let validator: ValidateFunction | null = null;
/** The draft save's own body schema for the draft (DashboardConfigDraftInput, or null), compiled once per process. */
function validDraft(): ValidateFunction {
  validator ??= new Ajv({ strict: false, allErrors: true, validateFormats: false, schemas: contentSchemas as object[] }).compile({
    anyOf: [{ $ref: 'DashboardConfigDraftInput' }, { type: 'null' }],
  });
  return validator;
}

/** The edited text as the draft save's input: `null` clears the draft. */
function draftOf(text: string): DashboardConfigDraftInput | null {
  // A widget's open `config` sits three levels down (config, widgets, widget) and nests as deep as a body's may.
  const value = parseEditedText(text, MAX_JSON_DEPTH + 3);
  const check = validDraft();
  if (!check(value)) {
    const errors = documentErrors(check.errors ?? []);
    const shown = errors.length > 0 ? errors : [{ pointer: '/content', message: 'must be a dashboard config or null' }];
    throw new ApiError(
      'VALIDATION_FAILED',
      `The edited text is not a valid dashboard draft: ${shown.map((e) => `${e.pointer} ${e.message}`).join('; ')}. Nothing was written.`,
      { errors: shown },
    );
  }
  return value as DashboardConfigDraftInput | null;
}

/**
 * Canonical-text editing of a workbook's dashboard draft (an extension): read it as text with its
 * hash (VIEW on the workbook), replace exact text in it (EDIT, as the draft save). A workbook
 * without a draft reads as the text `null`.
 */
export function dashboardFileService(dashboards: Pick<DashboardsService, 'readDraft' | 'editDraft'>) {
  return {
    async read(caller: Caller, deploymentId: number, workbookId: number): Promise<TextFile> {
      return textFileOf(await dashboards.readDraft(caller, deploymentId, workbookId));
    },

    /**
     * Applies the edits to the draft text of `hash` and saves the result as the draft (widgets
     * without an id get one, as on the draft save): 409 when the draft's text is no longer that
     * one, 400 when an edit does not match exactly once or the result is not a valid draft.
     */
    async edit(caller: Caller, deploymentId: number, workbookId: number, input: TextEditInput): Promise<TextFile> {
      const saved = await dashboards.editDraft(
        caller,
        deploymentId,
        workbookId,
        (current) => {
          const file = textFileOf(current);
          requireCurrentHash(file, input.hash, `The dashboard draft of workbook ${workbookId}`);
          const next = draftOf(applyEdits(file.content, input.edits));
          // The same draft written otherwise (spacing, key order) is stored as it was: no write.
          return textFileOf(next).hash === file.hash ? (current as DashboardConfigDraftInput | null) : next;
        },
        '/content',
      );
      return textFileOf(saved);
    },
  };
}
export type DashboardFileService = ReturnType<typeof dashboardFileService>;
