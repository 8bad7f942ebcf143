import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams } from '../../shared/schemas.js';
import { PutDbtSyncSettingsBody } from './settings.schemas.js';
import type { DbtSyncSettingsService } from './settings.service.js';

const tags = ['dbt-sync'];
const COMMON = ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND'] as const;

/** The deployment's transformation-project settings (extension; reference 7.1 says they live in the deployment's integration settings). */
export function dbtSyncSettingsRoutes(service: DbtSyncSettingsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/deployments/:deploymentId/dbt-sync-settings',
      {
        schema: {
          operationId: 'getDbtSyncSettings',
          extension: true,
          tags,
          summary: 'The transformation-project settings syncs use (extension; SchemaRead)',
          description: 'A deployment that never saved any answers the defaults (`updatedAt` null).',
          params: DeploymentParams,
          response: { 200: Type.Ref('DbtSyncSettings') },
          problems: [...COMMON],
        },
      },
      async (request) => service.get(request.caller, request.params.deploymentId),
    );

    app.put(
      '/api/v1/deployments/:deploymentId/dbt-sync-settings',
      {
        schema: {
          operationId: 'putDbtSyncSettings',
          extension: true,
          tags,
          summary: 'Change the transformation-project settings; keys left out keep their values (extension; DeploymentUpdate)',
          description:
            '`ref: null` goes back to the deploy branch. Paths are relative (`..`, `.git`, backslashes and absolute paths are 400); a selector list given replaces that list. Bad input changes nothing.',
          params: DeploymentParams,
          body: PutDbtSyncSettingsBody,
          response: { 200: Type.Ref('DbtSyncSettings') },
          problems: [...COMMON],
        },
      },
      async (request) => service.put(request.caller, request.params.deploymentId, request.body),
    );
  };
}
