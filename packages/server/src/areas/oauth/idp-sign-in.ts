import * as oidc from 'openid-client';
import type { Audit } from '../../audit/index.js';
import type { Db } from '../../db/tables.js';
import type { Secrets } from '../../secrets/index.js';
import { findUserByEmail } from '../users/index.js';
import { consumeSignIn, deleteExpiredSignIns, findIdentityProvider, findSignIn, insertSignIn, sealedAs } from '../identity-provider/index.js';
import { domainsOf, IDP_CALLBACK_PATH } from '../identity-provider/index.js';
import { ProviderRefused, ProviderUnavailable, type ProviderSettings, type RelyingParty } from '../identity-provider/index.js';
import { hashOf } from './oauth.adapter.js';
import { randomToken } from '../../shared/tokens.js';

/** How long a browser may stay at the identity provider before its sign-in can no longer complete. */
export const SIGN_IN_TTL_MS = 10 * 60_000;

export type RefusalReason =
  | 'state_invalid'
  | 'other_browser'
  | 'expired'
  | 'provider_error'
  | 'provider_refused'
  | 'provider_unavailable'
  | 'no_email'
  | 'email_unverified'
  | 'domain_not_allowed'
  | 'unknown_user'
  | 'user_deactivated'
  | 'not_configured';

/** A sign-in that ends here: the page says `message`; nothing is issued. */
export class SignInRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
    readonly status: 400 | 403 | 502 = 400,
  ) {
    super(message);
  }
}

export interface SignedIn {
  userId: number;
  email: string;
  interactionUid: string;
}

interface Tenant {
  id: number;
  slug: string;
}

/**
 * Sign-in through the tenant's identity provider (docs/api/oauth.md, Identity provider): the browser is sent
 * to the provider with authorization code + PKCE (S256), a `state` and a `nonce`; the callback
 * takes the state out (single use, 10 minutes, bound to the tenant, to the interaction it was
 * started for and to the browser by a cookie), exchanges the code through outbound/, and matches
 * an active user of the tenant by a verified email in an allowed domain. Each outcome is audited.
 */
export function idpSignIn(deps: {
  db: Db;
  secrets: Secrets;
  relyingParty: RelyingParty;
  audit: Audit;
  originOf: (tenant: Tenant) => Promise<string>;
  now: () => Date;
}) {
  const { db, secrets, relyingParty, audit, now } = deps;

  async function settingsOf(tenant: Tenant): Promise<ProviderSettings | undefined> {
    const row = await findIdentityProvider(db, tenant.id);
    if (!row) return undefined;
    return {
      issuer: row.issuer,
      clientId: row.client_id,
      clientSecret: secrets.open(row.client_secret, sealedAs.clientSecret(tenant.id)),
      redirectUri: `${await deps.originOf(tenant)}${IDP_CALLBACK_PATH}`,
    };
  }

  async function refused(
    tenant: Tenant,
    error: SignInRefused,
    details: { email?: string | null; userId?: number | null; requestId: string; issuer?: string },
  ): Promise<SignInRefused> {
    await audit.recordFor(
      tenant.id,
      { userId: details.userId ?? null, email: details.email ?? null, credentialKind: 'identity-provider', credentialId: null },
      { action: 'sign-in.refused', details: { reason: error.reason, issuer: details.issuer ?? null } },
      { requestId: details.requestId },
    );
    return error;
  }

  return {
    async configured(tenantId: number): Promise<boolean> {
      return (await findIdentityProvider(db, tenantId)) !== undefined;
    },

    /** Where to send the browser, its state, and the value of the cookie that binds the callback to it. */
    async start(tenant: Tenant, interactionUid: string): Promise<{ location: string; state: string; binding: string }> {
      const settings = await settingsOf(tenant);
      if (!settings) throw new SignInRefused('not_configured', 'This account has no identity provider to sign in with.');
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const binding = randomToken(32);
      const at = now();
      const location = await relyingParty.authorizationUrl(settings, { state, nonce, codeVerifier }).catch((error: unknown) => {
        if (error instanceof ProviderUnavailable || error instanceof ProviderRefused)
          throw new SignInRefused(
            'provider_unavailable',
            'The identity provider could not be reached. Try again later, or ask an admin to check its settings.',
            502,
          );
        throw error;
      });
      await deleteExpiredSignIns(db, tenant.id, at.toISOString());
      const stateHash = hashOf(state);
      await insertSignIn(db, {
        tenant_id: tenant.id,
        state_hash: stateHash,
        binding_hash: hashOf(binding),
        interaction_uid: interactionUid,
        nonce,
        code_verifier: secrets.seal(codeVerifier, sealedAs.codeVerifier(stateHash)),
        created_at: at.toISOString(),
        expires_at: new Date(at.getTime() + SIGN_IN_TTL_MS).toISOString(),
      });
      return { location: location.href, state, binding };
    },

    /**
     * The provider's redirect back (the query of the callback the browser requested). Answers the signed-in user, or throws SignInRefused with what the page says.
     */
    async complete(tenant: Tenant, query: URLSearchParams, binding: string | undefined, requestId: string): Promise<SignedIn> {
      const state = query.get('state');
      const row = state === null ? undefined : await findSignIn(db, tenant.id, hashOf(state));
      const stale =
        'This sign-in link is not valid any more (it was used, has expired, or was not started here). Start signing in again from your device or app.';
      if (!row || state === null) throw await refused(tenant, new SignInRefused('state_invalid', stale), { requestId });
      // Another browser than the one that started the sign-in: refused, and the state stays usable by its own browser.
      if (binding === undefined || hashOf(binding) !== row.binding_hash)
        throw await refused(tenant, new SignInRefused('other_browser', 'This sign-in was started in another browser. Finish it there, or start again here.'), {
          requestId,
        });
      if (!(await consumeSignIn(db, row.id))) throw await refused(tenant, new SignInRefused('state_invalid', stale), { requestId });
      if (row.expires_at <= now().toISOString()) throw await refused(tenant, new SignInRefused('expired', stale), { requestId });
      const settings = await settingsOf(tenant);
      if (!settings) throw new SignInRefused('not_configured', 'This account has no identity provider to sign in with.');
      const issuer = settings.issuer;
      const providerError = query.get('error');
      if (providerError !== null) {
        throw await refused(tenant, new SignInRefused('provider_error', `The identity provider did not sign you in (${providerError.slice(0, 100)}).`), {
          requestId,
          issuer,
        });
      }
      let claims;
      try {
        claims = await relyingParty.signIn(settings, query, {
          state,
          nonce: row.nonce,
          codeVerifier: secrets.open(row.code_verifier, sealedAs.codeVerifier(row.state_hash)),
        });
      } catch (error) {
        if (error instanceof ProviderUnavailable)
          throw await refused(tenant, new SignInRefused('provider_unavailable', 'The identity provider could not be reached. Try again later.', 502), {
            requestId,
            issuer,
          });
        if (error instanceof ProviderRefused)
          throw await refused(tenant, new SignInRefused('provider_refused', 'The identity provider’s answer was not accepted. Start signing in again.'), {
            requestId,
            issuer,
          });
        throw error;
      }
      const email = claims.email;
      if (email === null)
        throw await refused(
          tenant,
          new SignInRefused('no_email', 'Your identity provider did not share an email address, so you cannot be matched to a user of this account.', 403),
          { requestId, issuer },
        );
      if (!claims.emailVerified)
        throw await refused(
          tenant,
          new SignInRefused(
            'email_unverified',
            `Your email address ${email} is not verified at your identity provider. Verify it there, then sign in again.`,
            403,
          ),
          { requestId, issuer, email },
        );
      const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
      if (!email.includes('@') || !domainsOf((await findIdentityProvider(db, tenant.id))!).includes(domain)) {
        throw await refused(tenant, new SignInRefused('domain_not_allowed', `Email addresses at ${domain} may not sign in to this account.`, 403), {
          requestId,
          issuer,
          email,
        });
      }
      const user = await findUserByEmail(db, tenant.id, email);
      if (!user)
        throw await refused(
          tenant,
          new SignInRefused('unknown_user', `No user of this account has the email address ${email}. Ask an admin to add you.`, 403),
          { requestId, issuer, email },
        );
      if (user.deactivated_at !== null)
        throw await refused(tenant, new SignInRefused('user_deactivated', `The user ${email} is deactivated in this account.`, 403), {
          requestId,
          issuer,
          email,
          userId: user.id,
        });
      return { userId: user.id, email: user.email, interactionUid: row.interaction_uid };
    },

    /** A sign-in that completed: who, through which provider, for which client and flow. */
    async signedIn(tenant: Tenant, who: SignedIn, details: { clientId: string; flow: 'device' | 'authorization_code'; requestId: string }): Promise<void> {
      const row = await findIdentityProvider(db, tenant.id);
      await audit.recordFor(
        tenant.id,
        { userId: who.userId, email: who.email, credentialKind: 'identity-provider', credentialId: null },
        { action: 'sign-in', details: { issuer: row?.issuer ?? null, clientId: details.clientId, flow: details.flow } },
        { requestId: details.requestId },
      );
    },
  };
}
export type IdpSignIn = ReturnType<typeof idpSignIn>;
