import { ATTRIBUTES_SCHEMA, GROUP_SCHEMA, USER_SCHEMA } from './scim.attributes.js';
import { invalidValue } from './scim.errors.js';
import type { ResourceKind } from './scim.paths.js';
import { etagOf, type Json, type JsonObject } from './scim.resources.js';
import type { ScimGroupRow, ScimUserRow } from './scim.store.js';

/**
 * Between stored rows and SCIM resources: what the REST tables hold (userName, givenName, active;
 * a group's name and members) and the SCIM document beside them, joined into one resource with
 * its meta; and a client's resource split back into those parts.
 */

/** The absolute URL of the SCIM service, for `location` and `$ref`. */
export type BaseUrl = string;

function parseDoc(text: string): JsonObject {
  return JSON.parse(text) as JsonObject;
}

function withMeta(resource: JsonObject, kind: ResourceKind, id: number, created: string, lastModified: string, base: BaseUrl): JsonObject {
  const meta: JsonObject = { resourceType: kind, created, lastModified };
  // The location and the $ref of members and groups depend on the host the request came through;
  // the version must not, so it is hashed without them (the ids they are made of stay in).
  const version = etagOf({ ...withoutServerRefs(resource), meta });
  return { ...resource, meta: { ...meta, location: `${base}/${kind}s/${id}`, version } };
}

/** The resource without the $ref this server derives from the base URL (members, groups). */
function withoutServerRefs(resource: JsonObject): JsonObject {
  const out: JsonObject = { ...resource };
  for (const key of ['members', 'groups']) {
    const list = out[key];
    if (!Array.isArray(list)) continue;
    out[key] = list.map((item) => {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) return item;
      const { $ref: _ref, ...rest } = item;
      return rest;
    });
  }
  return out;
}

export function renderUser(row: ScimUserRow, groups: Array<{ group_id: number; name: string }>, attributes: JsonObject | undefined, base: BaseUrl): JsonObject {
  const doc = parseDoc(row.document);
  if (attributes && Object.keys(attributes).length > 0) doc[ATTRIBUTES_SCHEMA] = attributes;
  const { externalId, name, ...rest } = doc;
  const fullName: JsonObject = { ...((name as JsonObject | undefined) ?? {}) };
  if (row.first_name !== null) fullName.givenName = row.first_name;
  const extensions = Object.keys(rest)
    .filter((k) => k.startsWith('urn:'))
    .sort((a, b) => Number(a === ATTRIBUTES_SCHEMA) - Number(b === ATTRIBUTES_SCHEMA));
  const resource: JsonObject = {
    schemas: [USER_SCHEMA, ...extensions],
    id: String(row.id),
    ...(externalId !== undefined ? { externalId } : {}),
    userName: row.email,
    ...(Object.keys(fullName).length > 0 ? { name: fullName } : {}),
    ...Object.fromEntries(Object.entries(rest).filter(([k]) => !k.startsWith('urn:'))),
    active: row.deactivated_at === null,
    ...(groups.length > 0
      ? { groups: groups.map((g) => ({ value: String(g.group_id), $ref: `${base}/Groups/${g.group_id}`, display: g.name, type: 'direct' })) }
      : {}),
    ...Object.fromEntries(extensions.map((k) => [k, rest[k] as Json])),
  };
  return withMeta(resource, 'User', row.id, row.created_at, row.updated_at, base);
}

export function renderGroup(row: ScimGroupRow, members: Array<{ user_id: number; email: string; document: string }>, base: BaseUrl): JsonObject {
  const doc = parseDoc(row.document);
  const resource: JsonObject = {
    schemas: [GROUP_SCHEMA],
    id: String(row.id),
    ...(doc.externalId !== undefined ? { externalId: doc.externalId } : {}),
    displayName: row.name,
    // A group without members has no `members` attribute: an empty list is unassigned (RFC 7643 section 2.5).
    ...(members.length > 0
      ? {
          members: members.map((m) => {
            const display = parseDoc(m.document).displayName;
            return { value: String(m.user_id), $ref: `${base}/Users/${m.user_id}`, display: typeof display === 'string' ? display : m.email, type: 'User' };
          }),
        }
      : {}),
  };
  return withMeta(resource, 'Group', row.id, row.created_at, row.updated_at, base);
}

/** The parts of a SCIM User the REST users table holds, and the rest for the SCIM document. */
export function splitUser(doc: JsonObject): { email: string; firstName: string | null; active: boolean | undefined; rest: JsonObject } {
  const { userName, active, name, ...rest } = doc;
  if (typeof userName !== 'string' || userName.trim() === '') throw invalidValue('"userName" is required (RFC 7643 section 4.1.1).');
  if (userName.length > 320) throw invalidValue('"userName" may have at most 320 characters.');
  const { givenName, ...otherNames } = (name as JsonObject | undefined) ?? {};
  if (Object.keys(otherNames).length > 0) rest.name = otherNames;
  return {
    email: userName,
    firstName: typeof givenName === 'string' ? givenName.slice(0, 255) : null,
    active: typeof active === 'boolean' ? active : undefined,
    rest,
  };
}

export function splitGroup(doc: JsonObject): { name: string; memberIds: number[]; rest: JsonObject } {
  const { displayName, members, ...rest } = doc;
  if (typeof displayName !== 'string' || displayName.trim() === '') throw invalidValue('"displayName" is required (RFC 7643 section 4.2).');
  if (displayName.length > 255) throw invalidValue('"displayName" may have at most 255 characters.');
  const memberIds = ((members as JsonObject[] | undefined) ?? []).map((m) => {
    const value = m.value;
    const id = typeof value === 'string' && /^[1-9][0-9]{0,15}$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(id)) throw invalidValue(`Member ${JSON.stringify(value ?? null)} is not the id of a User.`);
    return id;
  });
  return { name: displayName, memberIds: [...new Set(memberIds)], rest };
}
