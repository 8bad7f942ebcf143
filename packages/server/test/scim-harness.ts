import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './harness.js';

/** Helpers for the SCIM tests: requests in SCIM's media type, and SCIM's error shape. */
export const SCIM = '/api/scim/v2';
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

export interface ScimCall {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  key?: string | null;
  headers?: Record<string, string>;
  host?: string;
}

export async function scim(t: TestApp, { method = 'GET', path, body, key, headers = {}, host }: ScimCall): Promise<LightMyRequestResponse> {
  return t.request({
    method,
    url: `${SCIM}${path}`,
    ...(key === undefined ? {} : { key }),
    ...(host === undefined ? {} : { host }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }), ...headers },
  });
}

/** The JSON body of a successful SCIM response, after checking status and media type (RFC 7644 section 3.1). */
export function ok(res: LightMyRequestResponse, status = 200): any {
  if (res.statusCode !== status) throw new Error(`expected ${status}, got ${res.statusCode}: ${res.body}`);
  if (status === 204) return undefined;
  if (!String(res.headers['content-type']).startsWith('application/scim+json'))
    throw new Error(`expected application/scim+json, got ${String(res.headers['content-type'])}`);
  return res.json();
}

/** Asserts SCIM's error schema (RFC 7644 section 3.12): status as a string, a detail, and the scimType if given. */
export function scimError(res: LightMyRequestResponse, status: number, scimType?: string): { detail: string; scimType?: string } {
  if (res.statusCode !== status) throw new Error(`expected ${status}, got ${res.statusCode}: ${res.body}`);
  if (!String(res.headers['content-type']).startsWith('application/scim+json'))
    throw new Error(`expected application/scim+json, got ${String(res.headers['content-type'])}: ${res.body}`);
  const body = res.json() as { schemas: string[]; status: string; detail: string; scimType?: string };
  if (!body.schemas?.includes('urn:ietf:params:scim:api:messages:2.0:Error')) throw new Error(`not a SCIM error: ${res.body}`);
  if (body.status !== String(status)) throw new Error(`body status ${body.status} != "${status}"`);
  if (typeof body.detail !== 'string' || body.detail === '') throw new Error(`no detail: ${res.body}`);
  if (scimType !== undefined && body.scimType !== scimType) throw new Error(`expected scimType ${scimType}, got ${String(body.scimType)}: ${res.body}`);
  return body;
}

let serial = 0;

/** Provisions a user through SCIM; `extra` adds or overrides attributes. */
export async function provisionUser(t: TestApp, extra: Record<string, unknown> = {}): Promise<any> {
  serial += 1;
  const userName = `user${serial}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  return ok(
    await scim(t, {
      method: 'POST',
      path: '/Users',
      body: {
        schemas: [USER_SCHEMA],
        userName,
        name: { givenName: 'Given', familyName: 'Family' },
        emails: [{ value: userName, type: 'work', primary: true }],
        active: true,
        ...extra,
      },
    }),
    201,
  );
}

export async function provisionGroup(t: TestApp, displayName: string, memberIds: string[] = [], extra: Record<string, unknown> = {}): Promise<any> {
  return ok(
    await scim(t, {
      method: 'POST',
      path: '/Groups',
      body: { schemas: [GROUP_SCHEMA], displayName, members: memberIds.map((value) => ({ value })), ...extra },
    }),
    201,
  );
}

export const filterPath = (resource: 'Users' | 'Groups', filter: string, extra = '') => `/${resource}?filter=${encodeURIComponent(filter)}${extra}`;
