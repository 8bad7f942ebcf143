/**
 * The groups area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { ensureNameFree, groupLock, withNameConflict } from './groups.service.js';
export { addMembers, deleteGroupCascade, findGroup, findGroupByName, insertGroup, removeMembers, updateGroup } from './groups.store.js';
export { groupsArea } from './groups.module.js';
