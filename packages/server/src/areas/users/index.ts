/**
 * The users area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { adminLock, userWrites, withEmailConflict } from './users.service.js';
export { existingUserIds, findUserByEmail, findUserById, findUserDeactivation, findUserNameAndEmail, insertUser } from './users.store.js';
export { usersArea } from './users.module.js';
