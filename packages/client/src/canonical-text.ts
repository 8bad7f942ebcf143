import { ApiError, unwrap } from './errors.js';
import type { RawClient } from './pagination.js';
import type { ExternalDocumentPlacements, TextEditInput, TextFile } from './types.js';

type CallOptions = { signal?: AbortSignal };
const withSignal = ({ signal }: CallOptions = {}) => (signal ? { signal } : {});

/** How `transform` rewrites a text: the new text, or the same text to change nothing. */
export type TextTransform = (content: string) => string | Promise<string>;

export interface TransformOptions extends CallOptions {
  /** Times the text is read again and `transform` reapplied when someone else changed it first (409). Default 3. */
  retries?: number;
}

/**
 * One document edited as canonical text (an extension): `get` answers `{ content, hash }`; `edit`
 * sends exact-text edits made against `hash` (409 FILE_HASH_MISMATCH when the text changed since,
 * and nothing is written); `transform` reads, rewrites the whole text with your function and saves
 * it, reading again and reapplying it when another write came first.
 *
 * @example
 * const { content, hash } = await mapi.reportFiles.get(1, 42);
 * await mapi.reportFiles.edit(1, 42, { hash, edits: [{ oldText: '"title": null', newText: '"title": "Revenue"' }] });
 * await mapi.reportFiles.transform(1, 42, (text) => text.replace('FROM orders', 'FROM orders_v2'));
 */
export interface TextFiles {
  get(deploymentId: number, id: number, options?: CallOptions): Promise<TextFile>;
  edit(deploymentId: number, id: number, input: TextEditInput, options?: CallOptions): Promise<TextFile>;
  transform(deploymentId: number, id: number, transform: TextTransform, options?: TransformOptions): Promise<TextFile>;
}

/** Whole-text replacement as one edit: the whole text occurs exactly once in itself. */
export function replaceAll(file: TextFile, content: string): TextEditInput {
  return { hash: file.hash, edits: [{ oldText: file.content, newText: content }] };
}

function textFiles(
  get: (deploymentId: number, id: number, options?: CallOptions) => Promise<TextFile>,
  edit: (deploymentId: number, id: number, input: TextEditInput, options?: CallOptions) => Promise<TextFile>,
): TextFiles {
  return {
    get,
    edit,
    async transform(deploymentId, id, transform, options = {}) {
      const retries = options.retries ?? 3;
      for (let attempt = 0; ; attempt++) {
        const file = await get(deploymentId, id, options);
        const content = await transform(file.content);
        if (content === file.content) return file;
        try {
          return await edit(deploymentId, id, replaceAll(file, content), options);
        } catch (error) {
          if (!(error instanceof ApiError && error.code === 'FILE_HASH_MISMATCH') || attempt >= retries) throw error;
        }
      }
    },
  };
}

export interface ExternalDocuments {
  /** Every report placement in the document, across the tenant's deployments; those you cannot read come as `access: 'DENIED'` (422 past 500 reports or 2000 placements). */
  placements(externalWorkbookId: string, options?: CallOptions): Promise<ExternalDocumentPlacements>;
}

export function createCanonicalText(api: RawClient): { reportFiles: TextFiles; dashboardFiles: TextFiles; externalDocuments: ExternalDocuments } {
  const report = '/api/v1/deployments/{deploymentId}/reports/{reportId}/file' as const;
  const draft = '/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/dashboard/file' as const;
  return {
    reportFiles: textFiles(
      async (deploymentId, reportId, options) => unwrap(await api.GET(report, { params: { path: { deploymentId, reportId } }, ...withSignal(options) })),
      async (deploymentId, reportId, input, options) =>
        unwrap(await api.PATCH(report, { params: { path: { deploymentId, reportId } }, body: input, ...withSignal(options) })),
    ),
    dashboardFiles: textFiles(
      async (deploymentId, workbookId, options) => unwrap(await api.GET(draft, { params: { path: { deploymentId, workbookId } }, ...withSignal(options) })),
      async (deploymentId, workbookId, input, options) =>
        unwrap(await api.PATCH(draft, { params: { path: { deploymentId, workbookId } }, body: input, ...withSignal(options) })),
    ),
    externalDocuments: {
      placements: async (externalWorkbookId, options) =>
        unwrap(
          await api.GET('/api/v1/external-documents/{externalWorkbookId}/placements', { params: { path: { externalWorkbookId } }, ...withSignal(options) }),
        ),
    },
  };
}
