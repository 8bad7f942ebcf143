/**
 * The workspace area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { renderCommitted } from './committed.js';
export {
  DashboardConfig,
  DashboardConfigDraft,
  DashboardConfigDraftInput,
  DashboardConfigInput,
  FillMissingRows,
  PeriodComparison,
  ReportKind,
  ReportPreferences,
  contentSchemas,
  normalizeDashboardConfig,
} from './content.schemas.js';
export type { Dashboard, ReportSnapshot } from './content.schemas.js';
export type { FolderTrees } from './folder-trees.js';
export { deleteItemPoliciesOf } from './items.store.js';
export { requirePlacement } from './folders.service.js';
export type { ItemRead } from './item-read.store.js';
export { loadViewContext, parseJson, placementOf, toWorkbookShape } from './item-view.js';
export type { ItemViewContext, Tolerate } from './item-view.js';
export { deploymentOfItem, findItem } from './items.store.js';
export type { StoredItem } from './items.store.js';
export { nameSearch } from './listing.store.js';
export type { NameSearch } from './listing.store.js';
export { moveOne } from './move.js';
export { chainsOf, deploymentTotal, seesEveryRow } from './tree.store.js';
export type { WorkspaceScope } from './tree.store.js';
export { visibilityFor, visibleRows } from './visibility.js';
export type { ItemTable, Visibility } from './visibility.js';
export { listAnonymously } from './shared-listing.js';
export type { AnonymousListingInput } from './shared-listing.js';
export { WorkspaceEntrySchema } from './listing.schemas.js';
export type { WorkspaceEntry } from './listing.schemas.js';
export {
  atLeast,
  itemNotFound,
  levelOn,
  openWorkspace,
  placeTarget,
  readAuthorized,
  requireItemAccess,
  requireListedFolder,
  viewOptionsOf,
} from './workspace-context.js';
export type { WorkspaceContext } from './workspace-context.js';
export { FolderPathEntrySchema, ItemName, ResourceOwnerSchema } from './workspace.schemas.js';
export type { ResourceOwner, Workbook } from './workspace.schemas.js';
export { workspaceArea } from './workspace.module.js';
