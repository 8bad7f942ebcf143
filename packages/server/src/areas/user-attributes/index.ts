/**
 * The user-attributes area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { attributeValues, checkedAttributeList, matchesType } from './user-attributes.service.js';
export type { AttributeValue } from './user-attributes.service.js';
export { listAttributes } from './user-attributes.store.js';
export { userAttributesArea } from './user-attributes.module.js';
