import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { CallbackDeps } from '../oauth-integrations/index.js';
import {
  BranchesQuery,
  ConnectGitHostBody,
  GitHostCallbackQuery,
  InstallationParams,
  ListQuery,
  PutGitHostAppBody,
  RepositoryParams,
} from './git-host.schemas.js';
import type { GitHostService } from './git-host.service.js';
import type { UpstreamsService } from './upstreams.service.js';
import { DeploymentParams } from '../../shared/schemas.js';

const tags = ['Git host'];
/** Callbacks a minute per client address: a browser completes one per link. */
export const GIT_HOST_CALLBACK_RATE_LIMIT = 30;
const LINKED = ['GIT_HOST_NOT_CONFIGURED', 'GIT_HOST_NOT_LINKED', 'GIT_HOST_UNAVAILABLE'] as const;

/** The account's git-host app (extension) and the caller's linked account on it (reference 5.19-5.22). */
export function gitHostRoutes(service: GitHostService, upstreams: UpstreamsService, deps: CallbackDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/build/api/v1/deployments/:deploymentId/git-host/connect',
      {
        schema: {
          operationId: 'connectGitHost',
          tags,
          summary: 'Connect a repository of the git host to the deployment and build it (reference 2.20; DeploymentUpdate)',
          description:
            'The caller’s linked account must reach the installation and the repository. The repository’s branch (`deployBranchName`, default its default branch) becomes the deploy branch and production builds from it; with `isNewRepo` the repository is created empty and receives the deployment’s model. From then on shared branches are pulled from it (POST …/pull) and every commit, merge and new branch is pushed to it before it lands here, so the two never disagree. Git runs with a token of the app’s installation.',
          params: DeploymentParams,
          body: ConnectGitHostBody,
          response: { 200: Type.Ref('Deployment') },
          problems: [
            'FORBIDDEN',
            'DEPLOYMENT_NOT_FOUND',
            ...LINKED,
            'GIT_HOST_NOT_FOUND',
            'GIT_HOST_REPO_EXISTS',
            'GIT_HOST_APP_INVALID',
            'UPSTREAM_DIVERGED',
            'UPSTREAM_UNAVAILABLE',
            'BRANCH_MOVED',
          ],
        },
      },
      async (request) => upstreams.connect(request.caller, request.params.deploymentId, request.body),
    );

    app.get(
      '/api/v1/tenant/git-host-app',
      {
        schema: {
          operationId: 'getGitHostApp',
          extension: true,
          tags,
          summary: 'The account’s git-host app (extension; admin)',
          response: { 200: Type.Ref('GitHostApp') },
          problems: ['FORBIDDEN', 'GIT_HOST_NOT_CONFIGURED'],
        },
      },
      async (request) => service.getApp(request.caller),
    );

    app.put(
      '/api/v1/tenant/git-host-app',
      {
        schema: {
          operationId: 'putGitHostApp',
          extension: true,
          tags,
          summary: 'Set the account’s git-host app, a GitHub-App-style app (extension; admin)',
          description:
            'Register the answer’s `callbackUrl` as the app’s user-authorization callback URL. `clientSecret` and `privateKey` are required the first time; left out or null they keep the stored values. Both are stored encrypted and never returned.',
          body: PutGitHostAppBody,
          response: { 200: Type.Ref('GitHostApp') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN'],
        },
      },
      async (request) => service.putApp(request.caller, request.body),
    );

    app.get(
      '/api/v1/git-host/status',
      {
        schema: {
          operationId: 'getGitHostStatus',
          tags,
          summary: 'Whether the caller has linked their git-host account, and the URLs to link it or to install the app (reference 5.19; any key)',
          description:
            'Each answer carries a fresh `linkUrl` (its `state` is single use and lives 10 minutes). Before an admin sets the account’s git-host app (PUT /api/v1/tenant/git-host-app) the answer is `connected: false` with both URLs empty; the other git-host routes answer 404 `GIT_HOST_NOT_CONFIGURED` then.',
          response: { 200: Type.Ref('GitHostStatus') },
        },
      },
      async (request) => service.status(request.caller),
    );

    app.delete(
      '/api/v1/git-host/link',
      {
        schema: {
          operationId: 'unlinkGitHost',
          extension: true,
          tags,
          summary: 'Unlink the caller’s git-host account (extension; any key)',
          description:
            'The token is revoked at the host when it can be and forgotten here in any case. Deployments the user connected stay connected: git runs with the app’s installation tokens.',
          response: { 204: Type.Null({ description: 'Unlinked' }) },
          problems: ['GIT_HOST_NOT_LINKED'],
        },
      },
      async (request, reply) => {
        await service.unlink(request.caller);
        return reply.code(204).send(null);
      },
    );

    // The host's redirect: no credential (the `state` names the user), a per-address budget.
    app.get(
      '/api/v1/git-host/callback',
      {
        exposeHeadRoute: false,
        config: { public: true, rateLimit: { max: GIT_HOST_CALLBACK_RATE_LIMIT }, secretQuery: true },
        schema: {
          operationId: 'gitHostCallback',
          extension: true,
          tags,
          summary: 'Where the git host sends the user back after authorizing the app (extension; no credential)',
          description:
            'Completes a link started from `linkUrl`: the `state` must be one this server issued, unused, at most 10 minutes old; it names the user. The code is exchanged for the user’s token, which is stored encrypted. A request that carries a credential must be that user’s.',
          security: [],
          querystring: GitHostCallbackQuery,
          response: { 200: Type.Ref('GitHostCallbackResult') },
          problems: ['OAUTH_STATE_INVALID', 'GIT_HOST_LINK_FAILED', 'GIT_HOST_NOT_CONFIGURED', 'GIT_HOST_UNAVAILABLE'],
        },
      },
      async (request) => {
        const tenant = await deps.resolveTenant(request);
        return service.callback(tenant.id, request.query, await deps.identify(request, tenant));
      },
    );

    app.get(
      '/api/v1/git-host/installations',
      {
        schema: {
          operationId: 'listGitHostInstallations',
          tags,
          summary: 'The app’s installations the caller’s linked account reaches (reference 5.20; any key)',
          querystring: ListQuery,
          response: { 200: Type.Ref('GitHostInstallationPage') },
          problems: [...LINKED],
        },
      },
      async (request) => service.installations(request.caller, request.query),
    );

    app.get(
      '/api/v1/git-host/installations/:installationId/repositories',
      {
        schema: {
          operationId: 'listGitHostRepositories',
          tags,
          summary: 'An installation’s repositories the caller’s linked account reaches (reference 5.21; any key)',
          params: InstallationParams,
          querystring: ListQuery,
          response: { 200: Type.Ref('GitHostRepositoryPage') },
          problems: [...LINKED, 'GIT_HOST_NOT_FOUND'],
        },
      },
      async (request) => service.repositories(request.caller, request.params.installationId, request.query),
    );

    app.get(
      '/api/v1/git-host/repositories/:owner/:repo/branches',
      {
        schema: {
          operationId: 'listGitHostBranches',
          tags,
          summary: 'A repository’s branches, the default one marked (reference 5.22; any key)',
          params: RepositoryParams,
          querystring: BranchesQuery,
          response: { 200: Type.Ref('GitHostBranchPage') },
          problems: [...LINKED, 'GIT_HOST_NOT_FOUND'],
        },
      },
      async (request) => service.branches(request.caller, request.params.owner, request.params.repo, request.query),
    );
  };
}
