import type { Executor } from '../../db/tables.js';
import { tenantOrigin, type PublicUrls } from '../tenants/index.js';
import { SCIM_PREFIX } from './scim.errors.js';

export type { PublicUrls };

/** The absolute base URL of a tenant's SCIM service, for `meta.location`, `Location` and `$ref` (see tenant-origin.ts). */
export function scimBaseUrl(db: Executor, options: PublicUrls) {
  const originOf = tenantOrigin(db, options);
  return async (tenant: { id: number; slug: string }): Promise<string> => `${await originOf(tenant)}${SCIM_PREFIX}`;
}
