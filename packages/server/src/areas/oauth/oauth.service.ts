import type { Caller } from '../../access/caller.js';
import type { Db } from '../../db/tables.js';
import { ApiError } from '../../shared/problems.js';
import { deploymentsOf, grantableScope } from './deployment-scope.js';
import { findActiveUser } from './oauth-models.store.js';
import type { OAuthProviders } from './oauth.provider.js';
import type { ApproveDeviceInput, DeviceApproval } from './oauth.schemas.js';

/** A user code as the provider stores it: upper case, letters and digits only (RFC 8628 section 6.1). */
export function normalizeUserCode(input: string): string {
  return input.toUpperCase().replace(/[^A-Z0-9]/g, '');
}

/**
 * Approving a device sign-in without an identity provider: an admin names the user the device
 * acts as (themselves by default). It does what the provider's own consent does: a grant of the
 * requested deployment scope, bound to the device code, which the device's next poll exchanges
 * for tokens.
 */
export function oauthService(db: Db, providers: OAuthProviders) {
  return {
    async approveDevice(caller: Caller, input: ApproveDeviceInput): Promise<DeviceApproval> {
      caller.access.requireAccountAdmin('approve a device sign-in');
      const userId = input.userId ?? caller.actor.userId;
      return approveDeviceCode(db, providers, caller.tenant, input.userCode, userId);
    },
  };
}
export type OAuthService = ReturnType<typeof oauthService>;

/** Shared by the admin route and the operator command (`npm run admin -- approve-device`). */
export async function approveDeviceCode(
  db: Db,
  providers: OAuthProviders,
  tenant: { id: number; slug: string },
  userCode: string,
  userId: number,
): Promise<DeviceApproval> {
  const user = await findActiveUser(db, tenant.id, userId);
  if (!user) throw new ApiError('USER_NOT_FOUND', `No active user ${userId} in this tenant.`);
  const provider = await providers.forTenant(tenant);
  const code = await provider.DeviceCode.findByUserCode(normalizeUserCode(userCode));
  if (!code || code.accountId || code.error || code.consumed) {
    throw new ApiError('DEVICE_CODE_NOT_FOUND', 'No device sign-in waits under this user code: it is wrong, expired, or already approved.');
  }
  const requested = (code.deviceInfo as { scope?: unknown } | undefined)?.scope;
  const scope = grantableScope(typeof requested === 'string' ? requested : undefined);
  const grant = new provider.Grant({ accountId: String(userId), clientId: String(code.clientId) });
  if (scope) grant.addOIDCScope(scope);
  const grantId = await grant.save();
  Object.assign(code, { accountId: String(userId), grantId, scope, authTime: Math.floor(Date.now() / 1000) });
  await code.save();
  return { userId, clientId: String(code.clientId), deploymentIds: deploymentsOf(scope) };
}
