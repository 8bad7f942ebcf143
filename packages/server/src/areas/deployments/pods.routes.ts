import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams, PageQuery } from '../../shared/schemas.js';
import type { PodsService } from './pods.service.js';

const tags = ['Deployments'];
const nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const DeploymentPodSchema = Type.Object(
  {
    name: Type.String(),
    containers: Type.Union([Type.Array(Type.String()), Type.Null()]),
    ready: Type.Union([Type.Boolean(), Type.Null()]),
    restartCount: Type.Union([Type.Integer(), Type.Null()]),
    status: nullable(
      Type.String({
        description: '`Pending`, `Running`, `CrashLoopBackOff` (restarting after crashes, with back-off) or `Terminated` (stopped: suspended while idle).',
      }),
    ),
    type: nullable(Type.String({ description: '`production`, `staging` or `dev`.' })),
  },
  { $id: 'DeploymentPod' },
);

export const DeploymentLogLineSchema = Type.Object({ pod: Type.String(), date: Type.String(), message: Type.String() }, { $id: 'DeploymentLogLine' });

export const podSchemas = [DeploymentPodSchema, DeploymentLogLineSchema];

export function podsRoutes(pods: PodsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/deployments/:deploymentId/pods',
      {
        schema: {
          operationId: 'listPods',
          tags,
          summary: 'The pods running the deployment’s environments (reference 1.10; DeploymentRead)',
          description:
            'One pod per environment that runs or ran: production once a build succeeded, staging branches, developers in dev mode. A pod that crashes is restarted with a back-off that doubles (`restartCount` counts restarts; `CrashLoopBackOff` while it waits after crashes in a row); one that fails its liveness checks is killed and restarted; one suspended after 10 idle minutes shows `Terminated` until its next use.',
          params: DeploymentParams,
          querystring: Type.Object(PageQuery, { additionalProperties: false }),
          response: { 200: Type.Object({ items: Type.Array(Type.Ref('DeploymentPod')), pageInfo: Type.Ref('PageInfo') }) },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'INVALID_CURSOR'],
        },
      },
      async (request) => pods.pods(request.caller, request.params.deploymentId, request.query),
    );
    app.get(
      '/api/v1/deployments/:deploymentId/logs',
      {
        schema: {
          operationId: 'listRuntimeLogs',
          tags,
          summary: 'The tail of the runtime logs, merged in time order (reference 1.9; DeploymentRead)',
          description:
            'Without `after`: the newest `first` lines, oldest first. With `after` set to a page’s `endCursor`: the lines written since, so passing each `endCursor` back follows the log (`endCursor` is never null: an empty tail gives the deployment’s newest line, an empty page keeps the cursor). Kept across restarts, the newest 10,000 lines per deployment (RUNTIME_LOG_LINES). `source=production` reads the production pod, `source=dev` staging and development pods. Pods have one container, `MAIN`; the other containers answer no lines. Values of environment variables never appear: a runtime printing one is logged with `[REDACTED]` in its place.',
          params: DeploymentParams,
          querystring: Type.Object(
            {
              ...PageQuery,
              source: Type.Optional(Type.Enum(['production', 'dev'])),
              pod: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
              container: Type.Optional(Type.Enum(['INIT', 'MAIN', 'platform-server', 'vector', 'api-proxy'])),
            },
            { additionalProperties: false },
          ),
          response: { 200: Type.Object({ items: Type.Array(Type.Ref('DeploymentLogLine')), pageInfo: Type.Ref('PageInfo') }) },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'INVALID_CURSOR'],
        },
      },
      async (request) => pods.logs(request.caller, request.params.deploymentId, request.query),
    );
  };
}
