import { defineArea } from '../../platform/index.js';
import { contentSchemas } from './content.schemas.js';
import { FolderTrees } from './folder-trees.js';
import { foldersRoutes } from './folders.routes.js';
import { folderSchemas } from './folders.schemas.js';
import { foldersService } from './folders.service.js';
import { listingSchemas } from './listing.schemas.js';
import { workspaceRoutes } from './workspace.routes.js';
import { workspaceSchemas } from './workspace.schemas.js';
import { workspaceService } from './workspace.service.js';

/**
 * The workspace: folders and items, listing, the bulk move. `folderTreeSettleMs`: how long a
 * deployment's folders must stay unchanged before its folder tree is held in memory.
 */
export const workspaceArea = defineArea('workspace', ({ platform: { store, now } }, config: { folderTreeSettleMs?: number }) => {
  const folders = foldersService(store, now);
  const workspace = workspaceService(store, now);
  // Read through every request's caller (app.ts), and by embedded dashboards.
  const folderTrees = new FolderTrees(store.db, config.folderTreeSettleMs === undefined ? {} : { settleMs: config.folderTreeSettleMs });
  return {
    services: { folders, workspace, folderTrees },
    schemas: [...contentSchemas, ...workspaceSchemas, ...folderSchemas, ...listingSchemas],
    routes: () => [foldersRoutes(folders), workspaceRoutes(workspace)],
  };
});
