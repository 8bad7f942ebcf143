import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Store } from '../db/database.js';
import { ProblemRef } from '../shared/schemas.js';
import { sendProblem } from './error-handler.js';

/** A readiness probe must answer before the prober gives up, even when the database hangs. */
const READY_CHECK_MS = 2_000;

/**
 * Probes for load balancers and orchestrators: no credential, no tenant, and never rate-limited
 * (a refused probe would take a healthy process out of rotation).
 * `/healthz`: the process answers. `/readyz`: it can also reach its database.
 */
export function healthRoutes(store: Store): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/healthz',
      {
        config: { public: true, rateLimit: false },
        schema: {
          operationId: 'health',
          tags: ['Meta'],
          summary: 'Extension: liveness, answered without a credential',
          extension: true,
          security: [],
          response: { 200: Type.Object({ status: Type.Literal('ok') }) },
        },
      },
      async () => ({ status: 'ok' as const }),
    );

    app.get(
      '/readyz',
      {
        config: { public: true, rateLimit: false },
        schema: {
          operationId: 'ready',
          tags: ['Meta'],
          summary: 'Extension: readiness, 200 when the database answers, 503 problem details when it does not',
          extension: true,
          security: [],
          response: {
            200: Type.Object({ status: Type.Literal('ok') }),
            503: { description: 'The database does not answer (`code` UNAVAILABLE)', ...ProblemRef },
          },
        },
      },
      async (request, reply) => {
        try {
          await withinTime(sql`select 1`.execute(store.db), READY_CHECK_MS);
          return { status: 'ok' as const };
        } catch (error) {
          request.log.error({ err: error }, 'readiness check: the database did not answer');
          return sendProblem(request, reply, 'UNAVAILABLE', 'The database does not answer; this process cannot serve requests now.');
        }
      },
    );
  };
}

function withinTime<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
