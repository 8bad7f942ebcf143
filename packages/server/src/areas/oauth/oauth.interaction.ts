import type { FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import type { Interaction } from 'oidc-provider';
import { DEPLOYMENTS_PARAM, deploymentsOf, requestedDeployments } from './deployment-scope.js';
import { escapeHtml, page } from './oauth.pages.js';
import { hashOf } from './oauth.adapter.js';

/** An interaction's uid as the provider makes them. */
export const UID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The cookie that binds an identity-provider callback to the browser that started the sign-in,
 * one per sign-in (named after its state's hash), so sign-ins in two tabs do not undo each other.
 */
export function bindingCookieName(state: string | null): string {
  return `mapi_idp_${hashOf(state ?? '').slice(0, 16)}`;
}

/** Sent only to the callback, only over HTTPS, never to scripts; `Lax` so the provider's top-level redirect back carries it. */
export function bindingCookie(name: string, value: string, maxAgeSeconds: number): string {
  return `${name}=${value}; Path=/oauth/idp; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=Lax`;
}

export function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim() || undefined;
  }
  return undefined;
}

/**
 * Whether this browser is the one the provider started the interaction in: it holds the
 * provider's signed interaction cookie for that uid (path-scoped to the interaction's pages).
 */
export async function sameBrowser(provider: Provider, request: FastifyRequest, reply: FastifyReply, uid: string): Promise<boolean> {
  try {
    return (await provider.interactionDetails(request.raw, reply.raw)).uid === uid;
  } catch {
    return false;
  }
}

export const otherBrowserPage = page(
  'Sign-in not available here',
  '<p>This sign-in was started in another browser, or has expired. Start again from your device or app, in this browser.</p>',
);

/** OpenID scopes the provider lists, which a consent grants when asked for. */
const OIDC_SCOPES = new Set(['openid', 'offline_access', 'email']);

function requestedScope(interaction: Interaction): string | undefined {
  return typeof interaction.params.scope === 'string' ? interaction.params.scope : undefined;
}

/** The deployments the app asked for (the request's own scope, kept by the provider's configuration). */
function deploymentScope(interaction: Interaction): string[] {
  const value = interaction.params[DEPLOYMENTS_PARAM];
  return requestedDeployments(typeof value === 'string' ? value : undefined);
}

/** The deployment scope the user consents to on this page, for the audit log. */
export function consentedScope(interaction: Interaction): string {
  return deploymentScope(interaction).join(' ');
}

/** What an app asks for, as the consent page says it. */
export async function consentPage(provider: Provider, interaction: Interaction, email: string | undefined): Promise<string> {
  const clientId = String(interaction.params.client_id);
  const client = await provider.Client.find(clientId);
  const name = escapeHtml(client?.clientName ?? clientId);
  const ids = deploymentsOf(deploymentScope(interaction).join(' '));
  const reach = ids === null ? 'every deployment you can reach' : `deployment${ids.length === 1 ? '' : 's'} ${ids.join(', ')}`;
  const offline = (requestedScope(interaction) ?? '').split(' ').includes('offline_access') || client?.grantTypeAllowed('refresh_token') === true;
  return page(
    'Allow access?',
    `<p><strong>${name}</strong> asks to act as you${email === undefined ? '' : ` (${escapeHtml(email)})`} in ${escapeHtml(reach)}, with your permissions there${offline ? ', and to stay signed in until you revoke it' : ''}.</p>` +
      `<form method="post" action="/oauth/interaction/${escapeHtml(interaction.uid)}/consent"><button type="submit" name="decision" value="allow">Allow</button> <button type="submit" name="decision" value="deny">Deny</button></form>`,
  );
}

/**
 * Records the user's consent as the provider's grant: the OpenID scopes asked for and the
 * deployments asked for (every deployment the user can reach when none are named).
 */
export async function grantConsent(provider: Provider, details: Interaction): Promise<string> {
  const accountId = String(details.session?.accountId);
  const clientId = String(details.params.client_id);
  const grant = (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ?? new provider.Grant({ accountId, clientId });
  const scope = [...(requestedScope(details) ?? '').split(' ').filter((value) => OIDC_SCOPES.has(value)), ...deploymentScope(details)];
  grant.addOIDCScope(scope.join(' '));
  const claims = (details.prompt.details as { missingOIDCClaims?: string[] }).missingOIDCClaims;
  if (claims) grant.addOIDCClaims(claims);
  return grant.save();
}
