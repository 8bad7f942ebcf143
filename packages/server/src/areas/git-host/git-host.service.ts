import type { Caller } from '../../access/caller.js';
import type { Db, GitHostAppRow, GitHostLinkRow } from '../../db/tables.js';
import { OutboundError, type Outbound } from '../../outbound/index.js';
import type { Secrets } from '../../secrets/index.js';
import { decodeCursor, legacyPage, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import { claimState, newState } from '../oauth-integrations/index.js';
import { urlProblem } from '../oauth-integrations/index.js';
import { appPrivateKey } from './app-jwt.js';
import { authorizeUrl, gitHostClient, HostError, installUrl, type HostSettings, type UserTokens } from './github-client.js';
import type { GitHostApp, GitHostCallbackInput, PutGitHostAppInput } from './git-host.schemas.js';
import {
  consumeState,
  deleteExpiredStates,
  deleteLink,
  findApp,
  findLink,
  findState,
  insertState,
  replaceLinkTokens,
  saveApp,
  saveLink,
  sealedAs,
  type LinkTokens,
} from './git-host.store.js';
import { findUserDeactivation } from '../users/index.js';

/** How long a link authorization can complete. */
export const STATE_TTL_MS = 10 * 60_000;
/** This server's callback at the tenant's origin, registered as the app's callback URL. */
export const GIT_HOST_CALLBACK_PATH = '/api/v1/git-host/callback';

export const notConfigured = () =>
  new ApiError('GIT_HOST_NOT_CONFIGURED', 'This account has no git-host app: an admin sets one with PUT /api/v1/tenant/git-host-app.');
/** A user token is refreshed this long before it expires. */
const REFRESH_LEAD_MS = 60_000;
/** How long a refused refresh waits for a concurrent winner's tokens to be stored, and how often it looks. */
const REFRESH_WAIT_MS = 3_000;
const REFRESH_WAIT_STEP_MS = 100;
const linkExpired = () =>
  new ApiError(
    'GIT_HOST_NOT_LINKED',
    'Your linked git-host account’s token expired and the host did not renew it: link it again from `linkUrl` of GET /api/v1/git-host/status.',
  );
export const notLinked = () => new ApiError('GIT_HOST_NOT_LINKED', 'You have not linked your git-host account: open `linkUrl` of GET /api/v1/git-host/status.');
const invalidState = (why: string) =>
  new ApiError('OAUTH_STATE_INVALID', `The link cannot complete: ${why}. Start again from \`linkUrl\` of GET /api/v1/git-host/status.`);
const invalid = (pointer: string, message: string) =>
  new ApiError('VALIDATION_FAILED', `Nothing was changed: ${pointer.slice(6)} ${message}.`, { errors: [{ pointer, message }] });

export const settingsOf = (row: GitHostAppRow): HostSettings => ({
  apiBaseUrl: row.api_base_url,
  webBaseUrl: row.web_base_url,
  appSlug: row.app_slug,
  clientId: row.client_id,
});

/**
 * A host failure as the caller sees it: what the linked account cannot reach is 404, a revoked
 * token 409 (link again), anything else 502. Never the host's body, which may echo secrets.
 */
export function hostFailure(error: unknown): never {
  if (error instanceof HostError && (error.status === 404 || error.status === 403))
    throw new ApiError('GIT_HOST_NOT_FOUND', 'Your linked git-host account cannot reach this installation or repository (or it does not exist).');
  if (error instanceof HostError && error.status === 401)
    throw new ApiError(
      'GIT_HOST_NOT_LINKED',
      'The git host no longer accepts your linked account’s token: link it again from `linkUrl` of GET /api/v1/git-host/status.',
    );
  if (error instanceof HostError || error instanceof OutboundError)
    throw new ApiError('GIT_HOST_UNAVAILABLE', `The git host gave no usable answer: ${error.message}. Try again later.`);
  throw error;
}

/** A page of an in-memory list sorted by `key` (the host's lists are read whole, see github-client.ts). */
function pageOf<T>(items: T[], query: { first?: number | undefined; after?: string | undefined }, key: (item: T) => string | number) {
  const page = pageRequest(query);
  const sorted = [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  let rest = sorted;
  if (page.after !== undefined) {
    const [after] = decodeCursor(page.after, 1);
    rest = sorted.filter((item) => key(item) > (after as string | number));
  }
  return legacyPage(
    toPage(rest.slice(0, page.first + 1), page, (item) => [key(item)]),
    items.length,
  );
}

/**
 * The account's git-host app (admin settings) and each user's linked account on that host
 * (reference 5.19-5.22): the lists are what the caller's own token reaches at the host.
 */
export function gitHostService(
  db: Db,
  secrets: Secrets,
  outbound: Outbound,
  originOf: (tenant: { id: number; slug: string }) => Promise<string>,
  now: () => Date,
) {
  const iso = () => now().toISOString();

  const present = async (caller: Caller, row: GitHostAppRow): Promise<GitHostApp> => ({
    apiBaseUrl: row.api_base_url,
    webBaseUrl: row.web_base_url,
    appId: row.app_id,
    appSlug: row.app_slug,
    clientId: row.client_id,
    callbackUrl: `${await originOf(caller.tenant)}${GIT_HOST_CALLBACK_PATH}`,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });

  async function appOf(tenantId: number): Promise<GitHostAppRow> {
    const row = await findApp(db, tenantId);
    if (!row) throw notConfigured();
    return row;
  }

  const sealTokens = (tenantId: number, userId: number, tokens: UserTokens): LinkTokens => ({
    access_token: secrets.seal(tokens.accessToken, sealedAs.accessToken(tenantId, userId)),
    refresh_token: tokens.refreshToken === null ? null : secrets.seal(tokens.refreshToken, sealedAs.refreshToken(tenantId, userId)),
    expires_at: tokens.expiresAt,
  });

  /**
   * The caller's client at the host and their token. A token that expires within a minute is
   * refreshed first (the host rotates refresh tokens; of two refreshes at once the loser takes the
   * winner's tokens). A refresh the host refuses means the user must link again.
   */
  /** Refreshes in flight in this process, by link id: requests at once share one refresh. */
  const refreshing = new Map<number, Promise<void>>();

  /**
   * Refreshes the link's tokens. The host rotates refresh tokens, so of two refreshes at once
   * (other processes) one is refused: the loser waits a little for the winner to store its tokens
   * before it calls the link spent, because the winner's answer may still be on its way to the store.
   */
  async function refresh(app: GitHostAppRow, client: ReturnType<typeof gitHostClient>, link: GitHostLinkRow, at: Date): Promise<void> {
    const { tenant_id: tenantId, user_id: userId } = link;
    if (link.refresh_token === null) throw linkExpired();
    const used = link.refresh_token;
    try {
      const tokens = await client.refresh(
        secrets.open(app.client_secret, sealedAs.clientSecret(tenantId)),
        secrets.open(used, sealedAs.refreshToken(tenantId, userId)),
        at,
      );
      await replaceLinkTokens(db, link.id, used, sealTokens(tenantId, userId, tokens), at.toISOString());
    } catch (error) {
      if (!(error instanceof HostError && error.status === 400)) hostFailure(error);
      for (let waited = 0; ; waited += REFRESH_WAIT_STEP_MS) {
        const again = await findLink(db, tenantId, userId);
        if (!again) throw notLinked();
        if (again.refresh_token !== used) return;
        if (waited >= REFRESH_WAIT_MS) throw linkExpired();
        await new Promise((resolve) => setTimeout(resolve, REFRESH_WAIT_STEP_MS));
      }
    }
  }

  /**
   * The caller's client at the host and their token. A token that expires within a minute is
   * refreshed first; a refresh the host refuses means the user must link again.
   */
  async function linked(caller: Caller): Promise<{ client: ReturnType<typeof gitHostClient>; token: string }> {
    const { tenantId, userId } = caller.actor;
    const app = await appOf(tenantId);
    const client = gitHostClient(outbound, settingsOf(app));
    let link: GitHostLinkRow | undefined = await findLink(db, tenantId, userId);
    if (!link) throw notLinked();
    const at = now();
    if (link.expires_at !== null && Date.parse(link.expires_at) - REFRESH_LEAD_MS <= at.getTime()) {
      let flight = refreshing.get(link.id);
      if (!flight) {
        flight = refresh(app, client, link, at).finally(() => refreshing.delete(link!.id));
        refreshing.set(link.id, flight);
      }
      await flight;
      link = await findLink(db, tenantId, userId);
      if (!link) throw notLinked();
    }
    return { client, token: secrets.open(link.access_token, sealedAs.accessToken(link.tenant_id, link.user_id)) };
  }

  return {
    async getApp(caller: Caller): Promise<GitHostApp> {
      caller.access.requireAdmin('read the git-host app');
      return present(caller, await appOf(caller.actor.tenantId));
    },

    /** Creates or replaces the app; a secret left out or null keeps the stored one (both required the first time). */
    async putApp(caller: Caller, input: PutGitHostAppInput): Promise<GitHostApp> {
      caller.access.requireAccountAdmin('change the git-host app');
      const tenantId = caller.actor.tenantId;
      for (const name of ['apiBaseUrl', 'webBaseUrl'] as const) {
        const problem = urlProblem(input[name]) ?? (new URL(input[name]).search !== '' ? 'must not have a query' : null);
        if (problem !== null) throw invalid(`/body/${name}`, problem);
      }
      const secret = input.clientSecret ?? null;
      const key = input.privateKey ?? null;
      await db.transaction().execute(async (trx) => {
        const stored = await findApp(trx, tenantId);
        if (secret === null && !stored) throw invalid('/body/clientSecret', 'is required the first time');
        if (key === null && !stored) throw invalid('/body/privateKey', 'is required the first time');
        if (key !== null && appPrivateKey(key) === null) throw invalid('/body/privateKey', 'must be the app’s RSA private key in PEM');
        await saveApp(
          trx,
          tenantId,
          {
            api_base_url: input.apiBaseUrl,
            web_base_url: input.webBaseUrl,
            app_id: input.appId,
            app_slug: input.appSlug,
            client_id: input.clientId,
            client_secret: secret === null ? stored!.client_secret : secrets.seal(secret, sealedAs.clientSecret(tenantId)),
            private_key: key === null ? stored!.private_key : secrets.seal(key, sealedAs.privateKey(tenantId)),
          },
          iso(),
        );
      });
      return present(caller, await appOf(tenantId));
    },

    /**
     * Reference 5.19. Each call issues a fresh `linkUrl` state (single use, 10 minutes, bound to
     * the caller; only its hash is kept), so a status read is always ready to link. Without an app
     * there is nothing to link to: not connected, both URLs empty, and no state issued.
     */
    async status(caller: Caller): Promise<{ connected: boolean; linkUrl: string; settingsUrl: string }> {
      const tenantId = caller.actor.tenantId;
      const app = await findApp(db, tenantId);
      if (!app) return { connected: false, linkUrl: '', settingsUrl: '' };
      const { state, hash } = newState();
      const at = now();
      await deleteExpiredStates(db, tenantId, at.toISOString());
      await insertState(db, {
        tenant_id: tenantId,
        user_id: caller.actor.userId,
        state_hash: hash,
        created_at: at.toISOString(),
        expires_at: new Date(at.getTime() + STATE_TTL_MS).toISOString(),
      });
      const link = await findLink(db, tenantId, caller.actor.userId);
      return { connected: link !== undefined, linkUrl: authorizeUrl(settingsOf(app), state), settingsUrl: installUrl(settingsOf(app)) };
    },

    /**
     * The host's redirect back (no credential needed): the state names the user. A request that
     * does carry a credential must be that user's. The user's token is stored sealed.
     */
    async callback(tenantId: number, query: GitHostCallbackInput, credentialUserId: number | null): Promise<{ connected: boolean; login: string }> {
      const state = await claimState(
        query.state,
        { find: (hash) => findState(db, tenantId, hash), consume: (id) => consumeState(db, id) },
        { now: iso(), ttlMs: STATE_TTL_MS, credentialUserId },
        invalidState,
      );
      if (query.error !== undefined)
        throw new ApiError('GIT_HOST_LINK_FAILED', `The git host answered \`${query.error.replace(/[^\x20-\x7E]/g, '?').slice(0, 100)}\`.`);
      if (query.code === undefined || query.code === '') throw new ApiError('GIT_HOST_LINK_FAILED', 'The git host sent neither a `code` nor an `error`.');
      const user = await findUserDeactivation(db, tenantId, state.user_id);
      if (!user || user.deactivated_at !== null) throw invalidState('the user who started it is deactivated');
      const app = await appOf(tenantId);
      const client = gitHostClient(outbound, settingsOf(app));
      let tokens: UserTokens;
      let login: string;
      try {
        tokens = await client.exchangeCode(secrets.open(app.client_secret, sealedAs.clientSecret(tenantId)), query.code, now());
        login = await client.userLogin(tokens.accessToken);
      } catch (error) {
        if (error instanceof HostError && error.status === 400)
          throw new ApiError('GIT_HOST_LINK_FAILED', `The git host refused the code: \`${error.message}\`.`);
        hostFailure(error);
      }
      await saveLink(db, tenantId, state.user_id, { login, ...sealTokens(tenantId, state.user_id, tokens) }, iso());
      return { connected: true, login };
    },

    /** The caller's token at the host, refreshed if need be, for the other git-host services (connect). */
    linked,

    /**
     * Unlinks the caller's account (extension): the token is revoked at the host when it can be,
     * and forgotten here in any case. Deployments connected by the user stay connected: git runs
     * with the app's installation tokens, not the user's.
     */
    async unlink(caller: Caller): Promise<void> {
      const { tenantId, userId } = caller.actor;
      const link = await findLink(db, tenantId, userId);
      if (!link) throw notLinked();
      const app = await findApp(db, tenantId);
      if (app) {
        const client = gitHostClient(outbound, settingsOf(app));
        // Best effort: a host that cannot be reached does not keep the link here.
        await client
          .revoke(secrets.open(app.client_secret, sealedAs.clientSecret(tenantId)), secrets.open(link.access_token, sealedAs.accessToken(tenantId, userId)))
          .catch(() => undefined);
      }
      await deleteLink(db, tenantId, userId);
    },

    /** Reference 5.20: the app's installations the caller's account reaches, by installation id. */
    async installations(caller: Caller, query: { first?: number; after?: string }) {
      const { client, token } = await linked(caller);
      const found = await client.installations(token).catch(hostFailure);
      const page = pageOf(found, query, (i) => i.id);
      const items = page.items.map((i) => ({ installationId: String(i.id), id: String(i.id), login: i.login, avatarUrl: i.avatarUrl }));
      return { ...page, items, data: items };
    },

    /** Reference 5.21: an installation's repositories the caller's account reaches, by id. */
    async repositories(caller: Caller, installationId: number, query: { first?: number; after?: string }) {
      const { client, token } = await linked(caller);
      return pageOf(await client.repositories(token, installationId).catch(hostFailure), query, (r) => r.id);
    },

    /**
     * Reference 5.22: a repository's branches, by name, the default one marked. The installation
     * must be one the caller's account reaches; the repository is read with the caller's token.
     */
    async branches(caller: Caller, owner: string, repo: string, query: { installationId: number; first?: number; after?: string }) {
      const { client, token } = await linked(caller);
      const installations = await client.installations(token).catch(hostFailure);
      if (!installations.some((i) => i.id === query.installationId)) hostFailure(new HostError(404, 'not an installation of the linked account'));
      const [defaultBranch, names] = await Promise.all([client.defaultBranch(token, owner, repo), client.branches(token, owner, repo)]).catch(hostFailure);
      const page = pageOf(names, query, (name) => name);
      const items = page.items.map((name) => ({ name, isDefault: name === defaultBranch }));
      return { ...page, items, data: items };
    },
  };
}
export type GitHostService = ReturnType<typeof gitHostService>;
