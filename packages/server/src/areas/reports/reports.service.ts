import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import { mapUniqueViolation } from '../../db/errors.js';
import type { Access, Executor, ReportRow } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { decodeCursor, legacyPage, offsetPaging, toPage } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { requirePlacement } from '../workspace/index.js';
import { renderCommitted } from '../workspace/index.js';
import { loadViewContext, parseJson, placementOf, type ItemViewContext, type Tolerate } from '../workspace/index.js';
import { findItem, type StoredItem } from '../workspace/index.js';
import { moveOne } from '../workspace/index.js';
import { type WorkspaceScope } from '../workspace/index.js';
import { visibilityFor, visibleRows } from '../workspace/index.js';
import {
  itemNotFound,
  openWorkspace,
  readAuthorized,
  requireItemAccess,
  requireListedFolder,
  viewOptionsOf,
  type WorkspaceContext,
} from '../workspace/index.js';
import { queryChecksum, readPlacements, withSyncStatus } from './placements.js';
import {
  CONTENT_FIELDS,
  type ListReportsInput,
  type Report,
  type ReportContent,
  type ReportPage,
  type ReportSortKey,
  type UpsertReportInput,
} from './reports.schemas.js';
import {
  countReports,
  findReportByPublicId,
  insertReport,
  listReports,
  recordView,
  updateReport,
  type ListedReport,
  type ReportColumns,
  type ReportSortColumn,
} from './reports.store.js';

type ReportItem = StoredItem & { type: 'REPORT' };

const VERB: Record<Access, string> = { VIEW: 'view', EDIT: 'update', MANAGE: 'manage' };
const SORT_COLUMN: Record<ReportSortKey, ReportSortColumn> = { createdAt: 'created_at', updatedAt: 'updated_at', lastViewedAt: 'last_viewed_at', name: 'name' };

/** API field -> column, and whether the column holds JSON text. */
const COLUMN: Record<keyof ReportContent, { column: keyof ReportColumns; json: boolean }> = {
  kind: { column: 'kind', json: false },
  title: { column: 'title', json: false },
  description: { column: 'description', json: false },
  sqlQuery: { column: 'sql_query', json: false },
  pythonCode: { column: 'python_code', json: false },
  spec: { column: 'spec', json: true },
  meta: { column: 'meta', json: true },
  preferences: { column: 'preferences', json: true },
  periodComparisons: { column: 'period_comparisons', json: true },
  fillMissingRows: { column: 'fill_missing_rows', json: true },
};

/** The columns for the content fields `input` carries (all of them when `all`, absent ones null). */
function contentColumns(input: UpsertReportInput, all: boolean): Partial<ReportColumns> {
  const columns: Partial<Record<keyof ReportColumns, string | null>> = {};
  for (const field of CONTENT_FIELDS) {
    const value = input[field];
    if (value === undefined && !all) continue;
    const { column, json } = COLUMN[field];
    columns[column] = value === undefined || value === null ? null : json ? JSON.stringify(value) : (value as string);
  }
  return columns as Partial<ReportColumns>;
}

/**
 * The `Report` shape: every content field, where it sits, who owns it, and the caller's favorite.
 * Without `content`, the fields stored as JSON (spec, meta, preferences, periodComparisons,
 * fillMissingRows) are null: the form a committed write answers with when reading them failed.
 */
export function toReport(row: ReportRow, context: ItemViewContext, { content = true } = {}): Report {
  const json = (text: string | null) => (content ? parseJson(text) : null);
  const current = queryChecksum(row);
  return {
    id: row.id,
    deploymentId: row.deployment_id,
    type: 'REPORT',
    name: row.name,
    publicId: row.public_id,
    version: row.version,
    kind: row.kind as Report['kind'],
    title: row.title,
    description: row.description,
    sqlQuery: row.sql_query,
    pythonCode: row.python_code,
    spec: json(row.spec) as Report['spec'],
    meta: json(row.meta) as Report['meta'],
    preferences: json(row.preferences) as Report['preferences'],
    periodComparisons: json(row.period_comparisons) as Report['periodComparisons'],
    fillMissingRows: json(row.fill_missing_rows) as Report['fillMissingRows'],
    folderId: row.folder_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    createdBy: row.created_by,
    ...placementOf(context, { type: 'REPORT', id: row.id, folderId: row.folder_id, createdBy: row.created_by }),
    lastViewedAt: row.last_viewed_at,
    externalWorkbookPlacements: content ? readPlacements(row.placements).map((p) => withSyncStatus(p, current)) : [],
    currentQueryChecksum: current,
  };
}

function publicIdTaken(publicId: string, deploymentId: number): ApiError {
  return new ApiError(
    'REPORT_PUBLIC_ID_TAKEN',
    `A report with public id "${publicId}" already exists in deployment ${deploymentId}; public ids are unique per deployment.`,
  );
}

function versionMismatch(row: ReportRow, expected: number): ApiError {
  return new ApiError(
    'REPORT_VERSION_MISMATCH',
    `Report ${row.id} is at version ${row.version}, not ${expected}: it changed since you read it, and nothing was written. Read it again, reapply your change and send \`expectedVersion\` ${row.version}.`,
  );
}

/** 403 unless the caller's access to the report reaches `need`. */
async function requireAccess(trx: Executor, context: WorkspaceContext, item: ReportItem, need: Access): Promise<void> {
  await requireItemAccess(trx, context, item, need, VERB[need]);
}

/** `after` is refused where rows move under a cursor (lastViewedAt); `offsetPaging` refuses it beside `offset`. */
function refuseCursorUnavailable(input: ListReportsInput, keyset: boolean): void {
  if (!keyset && input.after !== undefined) {
    throw new ApiError(
      'CURSOR_UNAVAILABLE',
      'Cursor pagination is not available when reports are sorted by lastViewedAt, because reading a report changes its place in that order; page with `offset` instead.',
      { errors: [{ pointer: '/query/after', message: 'is not available with sortBy lastViewedAt; use offset' }] },
    );
  }
}

function withoutSortKey({ sort_key: _, ...row }: ListedReport): ReportRow {
  return row;
}

/** The keyset position an `after` cursor stands for; it must come from a page of the same ordering. */
function decodeAfter(cursor: string, sortBy: ReportSortKey, sortOrder: string): { value: string; id: number } {
  const [by, order, value, id] = decodeCursor(cursor, 4);
  if (by !== sortBy || order !== sortOrder || typeof value !== 'string' || typeof id !== 'number' || !Number.isSafeInteger(id)) {
    throw new ApiError(
      'INVALID_CURSOR',
      `The \`after\` cursor was not issued for this ordering (sortBy ${sortBy}, sortOrder ${sortOrder}); pass \`pageInfo.endCursor\` of the previous page with the same sortBy and sortOrder.`,
      {
        errors: [{ pointer: '/query/after', message: 'is not a cursor of this ordering' }],
      },
    );
  }
  return { value, id };
}

/**
 * Reports: upsert by public id, read (which records `lastViewedAt`), list. Writes hold the
 * deployment's tree lock, so a report never lands in a folder that a concurrent delete removes.
 */
export function reportsService(store: Store, now: Clock) {
  const { db } = store;

  async function view(caller: Caller, scope: WorkspaceScope, rows: ReportRow[]): Promise<Report[]> {
    const items: ReportItem[] = rows.map((row) => ({ type: 'REPORT', row }));
    const context = await loadViewContext(db, scope, caller, items);
    return rows.map((row) => toReport(row, context));
  }

  /** The report an upsert committed; never throws (committed.ts). */
  async function committed(caller: Caller, what: string, scope: WorkspaceScope, row: ReportRow): Promise<Report> {
    const item: ReportItem = { type: 'REPORT', row };
    const load = (tolerate: Tolerate) => loadViewContext(db, scope, caller, [item], { tolerate });
    const [report] = await renderCommitted(caller, what, [item], load, (_, context, options) => toReport(row, context, options));
    return report!;
  }

  /** EDIT on the report; a different `folderId` is a move, checked exactly as the single move. */
  async function update(trx: Executor, context: WorkspaceContext, existing: ReportRow, input: UpsertReportInput): Promise<ReportRow> {
    let row = existing;
    if (input.expectedVersion !== undefined && input.expectedVersion !== existing.version) {
      // Access first: the stored version is only told to a caller who may update the report.
      await requireAccess(trx, context, { type: 'REPORT', row: existing }, 'EDIT');
      throw versionMismatch(existing, input.expectedVersion);
    }
    if (input.folderId !== undefined && input.folderId !== row.folder_id) {
      // The move's own checks, in its order; the access it needs includes EDIT.
      row = (await moveOne(trx, context, 'REPORT', row.id, input.folderId, timestamp(now))).item.row as ReportRow;
    } else {
      await requireAccess(trx, context, { type: 'REPORT', row: existing }, 'EDIT');
    }
    const wanted: Partial<ReportColumns> = { name: input.name, ...contentColumns(input, false) };
    const changed = Object.entries(wanted).some(([column, value]) => row[column as keyof ReportRow] !== value);
    return changed ? updateReport(trx, context.scope, row.id, { ...wanted, updated_at: timestamp(now) }) : row;
  }

  async function create(trx: Executor, context: WorkspaceContext, publicId: string, input: UpsertReportInput): Promise<ReportRow> {
    const { scope, caller } = context;
    if (input.expectedVersion !== undefined) {
      throw new ApiError(
        'REPORT_VERSION_MISMATCH',
        `No report has public id "${publicId}" in deployment ${scope.deploymentId}, so none is at version ${input.expectedVersion}; nothing was written. Leave \`expectedVersion\` out to create it.`,
      );
    }
    const folderId = input.folderId ?? null;
    await requirePlacement(trx, context, folderId, 'report');
    const at = timestamp(now);
    return mapUniqueViolation({ reports_public_id: () => publicIdTaken(publicId, scope.deploymentId) }, () =>
      insertReport(trx, {
        ...(contentColumns(input, true) as ReportColumns),
        tenant_id: scope.tenantId,
        deployment_id: scope.deploymentId,
        folder_id: folderId,
        name: input.name,
        public_id: publicId,
        placements: null,
        last_viewed_at: null,
        created_by: caller.actor.userId,
        created_at: at,
        updated_at: at,
      }),
    );
  }

  return {
    /** Creates the report with `publicId` (EXPLORER or above, EDIT where it lands) or updates it (EDIT on it). */
    async upsert(caller: Caller, deploymentId: number, publicId: string, input: UpsertReportInput): Promise<{ created: boolean; report: Report }> {
      const context = await openWorkspace(db, caller, deploymentId);
      const { created, row } = await serialized(store, lockKey.deployment(deploymentId), async (trx) => {
        const existing = await findReportByPublicId(trx, context.scope, publicId);
        if (existing) return { created: false, row: await update(trx, context, existing, input) };
        return { created: true, row: await create(trx, context, publicId, input) };
      });
      return { created, report: await committed(caller, `report upsert in deployment ${deploymentId}`, context.scope, row) };
    },

    /**
     * Updates report `reportId` with the input `build` makes from its stored row, under the same
     * lock, checks and rules as the upsert's update (EDIT on it first; `build` runs only for a
     * caller who has it). `build` may refuse by throwing: nothing is written then.
     */
    async updateById(caller: Caller, deploymentId: number, reportId: number, build: (row: ReportRow) => UpsertReportInput): Promise<ReportRow> {
      const context = await openWorkspace(db, caller, deploymentId);
      return serialized(store, lockKey.deployment(deploymentId), async (trx) => {
        const item = await findItem(trx, context.scope, 'REPORT', reportId);
        if (!item) throw itemNotFound(context, 'REPORT', reportId);
        const existing = item.row as ReportRow;
        await requireAccess(trx, context, { type: 'REPORT', row: existing }, 'EDIT');
        return update(trx, context, existing, build(existing));
      });
    },

    /** The report (VIEW needed); reading it records `lastViewedAt`. */
    async get(caller: Caller, deploymentId: number, reportId: number): Promise<Report> {
      const context = await openWorkspace(db, caller, deploymentId);
      const read = await readAuthorized(db, store.dialect, context, 'REPORT', reportId, 'VIEW', VERB.VIEW);
      const row = await recordView(db, context.scope, reportId, timestamp(now));
      // Deleted between the read and the view: as if it had not been there.
      if (!row) throw itemNotFound(context, 'REPORT', reportId);
      return toReport(row, await loadViewContext(db, context.scope, caller, [{ type: 'REPORT', row }], viewOptionsOf(read)));
    },

    /**
     * The reports the caller may see, filtered and ordered. Keyset (cursor) pages for every
     * ordering but `lastViewedAt`: reading a report moves it in that ordering, so a cursor could
     * skip or repeat rows; that ordering pages by offset only (spec: Other operations, pagination).
     */
    async list(caller: Caller, deploymentId: number, input: ListReportsInput): Promise<ReportPage> {
      const context = await openWorkspace(db, caller, deploymentId);
      const sortBy = input.sortBy ?? 'createdAt';
      const sortOrder = input.sortOrder ?? (sortBy === 'name' ? 'asc' : 'desc');
      const keyset = sortBy !== 'lastViewedAt';
      refuseCursorUnavailable(input, keyset);
      const { page, offset } = offsetPaging(input);
      const column = SORT_COLUMN[sortBy];
      const visibility = await visibilityFor(context);
      const folderId = input.folderId === undefined ? undefined : input.folderId === 'root' ? null : Number(input.folderId);
      const filter = { folderId, kind: input.kind, createdBy: input.createdBy, search: input.search, visible: visibleRows(visibility, 'reports') };
      const position = { sort: column, direction: sortOrder, after: input.after === undefined ? undefined : decodeAfter(input.after, sortBy, sortOrder) };
      const rows = await listReports(db, store.dialect, context.scope, { ...filter, ...position, offset, limit: page.first + 1 });
      const { items: pageRows, pageInfo } = toPage(rows, page, (r) => [sortBy, sortOrder, r.sort_key, r.id]);
      await requireListedFolder(db, context, folderId, pageRows.length === 0);
      const { total, before } = await countReports(db, store.dialect, context.scope, filter, position);
      if (!keyset) {
        pageInfo.startCursor = null;
        pageInfo.endCursor = null;
      }
      pageInfo.hasPreviousPage ||= offset > 0;
      const items = await view(caller, context.scope, pageRows.map(withoutSortKey));
      return legacyPage({ items, pageInfo }, total, { offset: input.after === undefined ? offset : before, limit: page.first });
    },
  };
}
export type ReportsService = ReturnType<typeof reportsService>;
