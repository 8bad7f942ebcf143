import rateLimit, { type RateLimitOptions } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { ApiError } from '../shared/problems.js';

/**
 * Request budgets, per minute:
 * - routes that need a credential: one budget per API key (keys, not addresses, are who calls);
 * - public routes (`config.public`): one budget per client address, the route's own when it
 *   declares `config.rateLimit: { max: N }`, `perIpPerMinute` otherwise; `rateLimit: false`
 *   exempts a route (health checks only: probes must never be refused).
 * Counters live in Redis when `redisUrl` is set, so processes sharing a database share budgets;
 * otherwise in this process's memory.
 */
export interface RateLimitSettings {
  /** Requests a minute per API key; 0 turns the key budget off. */
  perKeyPerMinute: number;
  /** Requests a minute per client address on public routes that declare no budget; 0 turns it off. */
  perIpPerMinute: number;
  redisUrl: string | null;
  /** Prefix of the Redis keys, so several deployments (or test runs) can share one Redis. */
  redisKeyPrefix?: string;
}

const MINUTE = 60_000;

const byKey = (request: FastifyRequest) => (request.caller ? `key:${request.caller.actor.keyId}` : `ip:${request.ip}`);
const byAddress = (request: FastifyRequest) => `ip:${request.ip}`;

export async function installRateLimit(app: FastifyInstance, settings: RateLimitSettings): Promise<void> {
  // Installed even with both budgets off: a public route may declare its own (the embed exchange).
  // Registered before the plugin, so its own route hook sees the per-address budget.
  app.addHook('onRoute', (route) => {
    if (!route.config?.public || route.config.rateLimit === false) return;
    const declared = route.config.rateLimit;
    const max = declared?.max ?? settings.perIpPerMinute;
    route.config = {
      ...route.config,
      rateLimit: max === 0 ? false : { timeWindow: MINUTE, ...declared, max, keyGenerator: byAddress, errorResponseBuilder: tooManyFromAddress },
    };
  });
  const redis = settings.redisUrl ? await connectRedis(app, settings.redisUrl) : null;
  await app.register(rateLimit, {
    global: settings.perKeyPerMinute > 0,
    max: settings.perKeyPerMinute,
    timeWindow: MINUTE,
    // Route hooks run after the app's own onRequest hook, so the caller is known by now.
    keyGenerator: byKey,
    errorResponseBuilder: (_request, context) =>
      new ApiError('RATE_LIMITED', `More than ${context.max} requests a minute with this API key; retry in ${context.after}.`),
    ...(redis ? { redis, nameSpace: settings.redisKeyPrefix ?? 'mapi:rate-limit:', skipOnError: true } : {}),
  });
}

const tooManyFromAddress: NonNullable<RateLimitOptions['errorResponseBuilder']> = (_request, context) =>
  new ApiError('RATE_LIMITED', `More than ${context.max} requests a minute from this address; retry in ${context.after}.`);

/**
 * A Redis connection that never holds a request up: commands fail at once while it is down
 * (no offline queue, short timeouts) and the limiter then lets the request through. Failing open
 * keeps the API up when Redis is not; the outage is logged once, and its end too.
 */
async function connectRedis(app: FastifyInstance, url: string): Promise<Redis> {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    commandTimeout: 1_000,
    retryStrategy: (attempt) => Math.min(attempt * 500, 5_000),
  });
  let down = false;
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    app.log.error({ err: error }, 'Redis (REDIS_URL) is unreachable: rate limits are not enforced until it is back');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    app.log.info('Redis (REDIS_URL) is reachable again: rate limits are enforced');
  });
  app.addHook('onClose', async () => {
    redis.disconnect();
  });
  // Counting starts with the first request: wait for the connection, but only as long as a connect may take.
  await new Promise<void>((resolve) => {
    const settle = () => {
      clearTimeout(timer);
      redis.off('ready', settle);
      redis.off('error', settle);
      resolve();
    };
    const timer = setTimeout(settle, 2_000);
    redis.once('ready', settle);
    redis.once('error', settle);
  });
  return redis;
}
