import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams, PageQuery } from '../../shared/schemas.js';
import type { BranchesService } from './branches.service.js';
import {
  CommitBody,
  CreateBranchBody,
  DeleteBranchQuery,
  MergeBody,
  MergeToDefaultBody,
  PullBody,
  StagingBody,
  StartDevModeBody,
} from './data-model.schemas.js';
import type { DevModeService } from './dev-mode.service.js';

const tags = ['Data model'];
const base = '/build/api/v1/deployments/:deploymentId';
const COMMON = ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND'] as const;
/** A deployment connected to a git-host repository moves shared branches there first (git-host/upstreams.service.ts). */
const UPSTREAM = [
  'UPSTREAM_DIVERGED',
  'UPSTREAM_UNAVAILABLE',
  'GIT_HOST_NOT_CONFIGURED',
  'GIT_HOST_NOT_FOUND',
  'GIT_HOST_APP_INVALID',
  'GIT_HOST_UNAVAILABLE',
] as const;

export function branchesRoutes(devMode: DevModeService, branches: BranchesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      `${base}/dev-mode`,
      {
        config: { optionalBody: true },
        schema: {
          operationId: 'enterDevMode',
          tags,
          summary: 'Enter dev mode: fork (or reuse) this credential’s dev-… branch of a shared branch (reference 2.9; SchemaUpdate)',
          params: DeploymentParams,
          body: StartDevModeBody,
          response: { 200: Type.Ref('DevBranchResponse') },
          problems: [...COMMON, 'BRANCH_NOT_FOUND', 'INVALID_BRANCH'],
        },
      },
      async (request) => devMode.enter(request.caller, request.params.deploymentId, request.body),
    );

    app.delete(
      `${base}/dev-mode`,
      {
        schema: {
          operationId: 'exitDevMode',
          tags,
          summary: 'Leave dev mode: the credential’s calls target the deploy branch again (reference 2.10; SchemaUpdate)',
          description: 'Leaving while nothing is active changes nothing and answers `success: true`.',
          params: DeploymentParams,
          response: { 200: Type.Ref('DataModelWriteResponse') },
          problems: [...COMMON],
        },
      },
      async (request) => devMode.exit(request.caller, request.params.deploymentId),
    );

    app.post(
      `${base}/commit`,
      {
        config: { optionalBody: true },
        schema: {
          operationId: 'commitDataModel',
          tags,
          summary: 'Commit the pending changes of the dev-mode branch and push them to its parent (reference 2.15; SchemaUpdate)',
          description:
            'One commit by the calling user. The push is a fast-forward or a three-way merge; when both branches changed the same files it is a 409 `MERGE_CONFLICT` listing them (the commit stays on the dev branch), and `resolveMergeConflict: true` keeps the dev branch’s version of each. Refused with 403 when the parent is the deploy branch and `deployBranchReadOnly` is on.',
          params: DeploymentParams,
          body: CommitBody,
          response: { 200: Type.Ref('DataModelWriteResponse') },
          problems: [...COMMON, ...UPSTREAM, 'NO_DEV_MODE', 'NOT_A_DEV_BRANCH', 'INVALID_BRANCH', 'BRANCH_NOT_FOUND', 'MERGE_CONFLICT', 'BRANCH_MOVED'],
        },
      },
      async (request) => devMode.commit(request.caller, request.params.deploymentId, request.body),
    );

    app.get(
      `${base}/branches`,
      {
        schema: {
          operationId: 'listBranches',
          tags,
          summary: 'The deployment’s branches (reference 2.11; SchemaRead)',
          params: DeploymentParams,
          querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
          response: { 200: Type.Ref('BranchesListResponse') },
          problems: [...COMMON, 'INVALID_CURSOR'],
        },
      },
      async (request) => branches.list(request.caller, request.params.deploymentId, request.query),
    );

    app.post(
      `${base}/branches`,
      {
        schema: {
          operationId: 'createBranch',
          tags,
          summary: 'Create a shared branch (reference 2.12; SchemaUpdate)',
          params: DeploymentParams,
          body: CreateBranchBody,
          response: { 200: Type.Ref('DevBranchResponse') },
          problems: [...COMMON, ...UPSTREAM, 'BRANCH_NOT_FOUND', 'BRANCH_EXISTS', 'INVALID_BRANCH'],
        },
      },
      async (request) => branches.create(request.caller, request.params.deploymentId, request.body),
    );

    app.delete(
      `${base}/branches`,
      {
        schema: {
          operationId: 'deleteBranch',
          tags,
          summary: 'Delete a branch (reference 2.13; SchemaUpdate)',
          description:
            'The deploy branch is refused (400); an unknown branch is 404. Children take its parent; sessions on it fall back to the deploy branch, and deleting a dev-… branch ends its session.',
          params: DeploymentParams,
          querystring: DeleteBranchQuery,
          response: { 200: Type.Ref('DataModelWriteResponse') },
          problems: [...COMMON, ...UPSTREAM, 'BRANCH_NOT_FOUND', 'INVALID_BRANCH', 'BRANCH_MOVED'],
        },
      },
      async (request) => branches.remove(request.caller, request.params.deploymentId, request.query),
    );

    app.put(
      `${base}/branches/staging-environment`,
      {
        schema: {
          operationId: 'setBranchStagingEnvironment',
          tags,
          summary: 'Keep a shared branch’s staging environment on (reference 2.14; SchemaUpdate)',
          params: DeploymentParams,
          body: StagingBody,
          response: { 200: Type.Object({ data: Type.Ref('BranchResponse') }) },
          problems: [...COMMON, 'BRANCH_NOT_FOUND', 'INVALID_BRANCH'],
        },
      },
      async (request) => branches.staging(request.caller, request.params.deploymentId, request.body),
    );

    app.post(
      `${base}/pull`,
      {
        schema: {
          operationId: 'pullBranch',
          tags,
          summary: 'Fetch a branch from its upstream and build if it changed (reference 2.16; SchemaUpdate)',
          description:
            'From the git-host repository the deployment is connected to (POST …/git-host/connect): new commits there fast-forward the branch; when both sides have commits they are merged, and the merge goes to the repository first. `buildTriggered` is true only when the branch moved and a build started (production for the deploy branch, except in CLI mode). With no repository connected, nothing is fetched and `buildTriggered` is false.',
          params: DeploymentParams,
          body: PullBody,
          response: { 200: Type.Object({ buildTriggered: Type.Boolean() }) },
          problems: [...COMMON, ...UPSTREAM, 'BRANCH_NOT_FOUND', 'UPSTREAM_BRANCH_NOT_FOUND', 'INVALID_BRANCH', 'MERGE_CONFLICT', 'BRANCH_MOVED'],
        },
      },
      async (request) => branches.pull(request.caller, request.params.deploymentId, request.body),
    );

    app.post(
      `${base}/merge`,
      {
        config: { optionalBody: true },
        schema: {
          operationId: 'mergeIntoParent',
          tags,
          summary: 'Merge a branch into its parent (reference 2.17; SchemaUpdate)',
          description:
            'Default branch: the credential’s active one. A real three-way merge (or a fast-forward); a conflict is a 409 listing the files and changes nothing. Only commits merge: pending dev-mode changes stay pending. A parent that is the deploy branch needs `deployBranchMergeAllowed`.',
          params: DeploymentParams,
          body: MergeBody,
          response: { 200: Type.Ref('MergeResponse') },
          problems: [...COMMON, ...UPSTREAM, 'NO_DEV_MODE', 'BRANCH_NOT_FOUND', 'INVALID_BRANCH', 'MERGE_CONFLICT', 'BRANCH_MOVED'],
        },
      },
      async (request) => branches.merge(request.caller, request.params.deploymentId, request.body),
    );

    app.post(
      `${base}/merge-to-default`,
      {
        schema: {
          operationId: 'mergeToDeployBranch',
          tags,
          summary: 'Merge a branch straight into the deploy branch (reference 2.18; SchemaUpdate)',
          description: 'Refused with 403 when `deployBranchMergeAllowed` is off. The branch is kept unless `removeBranchAfterMerge` is true.',
          params: DeploymentParams,
          body: MergeToDefaultBody,
          response: { 200: Type.Ref('MergeResponse') },
          problems: [...COMMON, ...UPSTREAM, 'NO_DEV_MODE', 'BRANCH_NOT_FOUND', 'INVALID_BRANCH', 'MERGE_CONFLICT', 'BRANCH_MOVED'],
        },
      },
      async (request) => branches.mergeToDefault(request.caller, request.params.deploymentId, request.body),
    );
  };
}
