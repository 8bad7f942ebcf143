import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../shared/problems.js';

/**
 * A budget of requests per minute for each API key (each client address for requests without
 * one), kept in this process's memory: with N processes the effective budget is N times larger.
 * Over budget: 429 problem details with `Retry-After` in seconds.
 */
export async function installRateLimit(app: FastifyInstance, perMinute: number): Promise<void> {
  await app.register(rateLimit, {
    max: perMinute,
    timeWindow: 60_000,
    // Route hooks run after the app's own onRequest hook, so the caller is known by now.
    keyGenerator: (request) => (request.caller ? `key:${request.caller.actor.keyId}` : `ip:${request.ip}`),
    errorResponseBuilder: (_request, context) =>
      new ApiError('RATE_LIMITED', `More than ${context.max} requests a minute with this API key; retry in ${context.after}.`),
  });
}
