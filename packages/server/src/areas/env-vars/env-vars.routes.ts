import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams } from '../../shared/schemas.js';
import { BODY_MAX, EnvVarParams, EnvVarsQuery, SetEnvVariablesBody } from './env-vars.schemas.js';
import type { EnvVarsService } from './env-vars.service.js';

const tags = ['Deployments'];
const COMMON = ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND'] as const;

/** A deployment's environment variables (reference 1.11-1.12): values encrypted at rest, secret-looking ones masked on reads. */
export function envVarsRoutes(service: EnvVarsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/deployments/:deploymentId/env-vars',
      {
        schema: {
          operationId: 'listEnvVariables',
          tags,
          summary: 'The deployment’s environment variables, secret-looking values masked (reference 1.11; SecretsManage)',
          description:
            'In name order (byte order). A value whose name contains PASS, SECRET, TOKEN, KEY or CREDENTIAL, in any case, is returned as `[ENCRYPTED]`.',
          params: DeploymentParams,
          querystring: EnvVarsQuery,
          response: { 200: Type.Ref('EnvVariablesListResponse') },
          problems: [...COMMON],
        },
      },
      async (request) => service.list(request.caller, request.params.deploymentId, request.query),
    );

    app.put(
      '/api/v1/deployments/:deploymentId/env-vars',
      {
        bodyLimit: BODY_MAX,
        schema: {
          operationId: 'setEnvVariables',
          tags,
          summary: 'Create or overwrite environment variables by name; the others keep their values (reference 1.12; SecretsManage)',
          description:
            'All or nothing: 400 `VALIDATION_FAILED`, changing nothing, when a value is the `[ENCRYPTED]` placeholder, when a new name is not a POSIX identifier (a name the deployment already has may be sent as it is), when a name is listed twice, or when the variables would make a PostgreSQL data source (`DB_TYPE=postgres`) that is the server’s own PostgreSQL cluster (compared by cluster identity, when the server can reach the source within a few seconds) or whose `DB_URL` names a Unix socket or sets `host=`/`hostaddr=` where the server does not allow it (DATASOURCES_ALLOW_SOCKETS). Answers the first page of the list after the change, masked.',
          params: DeploymentParams,
          body: SetEnvVariablesBody,
          response: { 200: Type.Ref('EnvVariablesListResponse') },
          problems: [...COMMON],
        },
      },
      async (request) => service.set(request.caller, request.params.deploymentId, request.body),
    );

    app.delete(
      '/api/v1/deployments/:deploymentId/env-vars/:name',
      {
        schema: {
          operationId: 'deleteEnvVariable',
          extension: true,
          tags,
          summary: 'Remove one environment variable, legacy names included (extension; SecretsManage)',
          params: EnvVarParams,
          response: { 200: Type.Ref('EnvVariableDeleted') },
          problems: [...COMMON, 'ENV_VAR_NOT_FOUND'],
        },
      },
      async (request) => service.remove(request.caller, request.params.deploymentId, request.params.name),
    );
  };
}
