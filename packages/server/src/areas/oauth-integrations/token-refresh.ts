import { randomUUID } from 'node:crypto';
import type { Store } from '../../db/database.js';
import type { JobRecord, Jobs } from '../../jobs/index.js';
import { claimRefresh, releaseRefresh, tokensDueForRefresh } from './oauth-integrations.store.js';
import type { BackgroundOutcome, UserOAuthTokensService } from './user-oauth-tokens.service.js';

/** The job that refreshes one claimed token. */
export const REFRESH_JOB = 'user-oauth-token.refresh';

interface RefreshPayload {
  tokenId: number;
  claim: string;
  /** The access token's expiry when claimed: a token refreshed since is left alone. */
  expiresAt: string | null;
}

export interface TokenRefreshOptions {
  now: () => Date;
  /** Time between scans once the jobs service's schedules are started; default 1 minute. `start(scanMs)` may say otherwise. */
  scanMs?: number;
  /** Tokens whose access token expires within this are refreshed; default 5 minutes (before the 2-minute refresh on use). */
  leadMs?: number;
  /** How long a claim holds; past it, another scan may claim the token again. Longer than a refresh job may run. */
  claimMs?: number;
  /** Tokens claimed per scan; the next scan takes the rest. */
  batch?: number;
  onError?: (error: unknown, what: string) => void;
}

export const DEFAULT_LEAD_MS = 5 * 60_000;
const DEFAULT_CLAIM_MS = 5 * 60_000;
/** A refresh is one call to the provider through outbound/ (with its own timeouts): a minute is ample. */
const JOB_TIMEOUT_MS = 60_000;
/** How long a finished refresh job's record is kept (for operators reading the jobs table); refreshes run hourly per token. */
const KEEP_JOBS_MS = 24 * 60 * 60_000;

/**
 * Refreshes user OAuth tokens before they expire, in the background, on the jobs service (in
 * process on SQLite, pg-boss on PostgreSQL). A scan, every `scanMs` in each server process,
 * claims each due token with a conditional update, so however many processes scan at once one
 * claim wins, and only the winner queues a job; the job refreshes the token only while that claim
 * is still its own, under the per-token lock a refresh on use takes too. A failure marks the
 * token `REFRESH_FAILED` with `lastError`; one that was passing (the provider unreachable or
 * failing on its side) is tried again after the retry delay, a refusal is not.
 */
export function tokenRefresher(store: Store, tokens: Pick<UserOAuthTokensService, 'refreshClaimed'>, jobs: Jobs, options: TokenRefreshOptions) {
  const { db } = store;
  const { now } = options;
  const leadMs = options.leadMs ?? DEFAULT_LEAD_MS;
  const claimMs = options.claimMs ?? DEFAULT_CLAIM_MS;
  const batch = options.batch ?? 100;

  jobs.register<RefreshPayload, { outcome: BackgroundOutcome }>({
    kind: REFRESH_JOB,
    maxAttempts: 1,
    timeoutMs: JOB_TIMEOUT_MS,
    run: async ({ payload }) => ({ outcome: await tokens.refreshClaimed(payload.tokenId, payload.claim, payload.expiresAt) }),
  });

  /** Claims the tokens due now and queues a refresh job for each claim won; answers those jobs. */
  async function scan(): Promise<JobRecord[]> {
    const at = now();
    const iso = at.toISOString();
    const due = await tokensDueForRefresh(db, iso, new Date(at.getTime() + leadMs).toISOString(), batch);
    const queued: JobRecord[] = [];
    for (const row of due) {
      const claim = randomUUID();
      if (!(await claimRefresh(db, row, claim, new Date(at.getTime() + claimMs).toISOString(), iso))) continue;
      try {
        // A process whose worker starts on demand (AppOptions.startJobs) starts it with its first job.
        await jobs.start();
        queued.push(await jobs.enqueue<RefreshPayload>(row.tenant_id, REFRESH_JOB, { tokenId: row.id, claim, expiresAt: row.access_token_expires_at }));
      } catch (error) {
        await releaseRefresh(db, row.id, claim);
        throw error;
      }
    }
    return queued;
  }

  // Every process scans (the claims let one of them refresh each token), then deletes refresh
  // jobs finished a day ago; a scan still running when the next is due is not doubled.
  const loop = jobs.schedule({
    name: 'user-oauth-tokens.refresh',
    everyMs: options.scanMs ?? 60_000,
    run: async () => {
      await scan();
      await jobs.prune(REFRESH_JOB, new Date(now().getTime() - KEEP_JOBS_MS));
    },
    onError: (error) => options.onError?.(error, 'the background refresh of user OAuth tokens failed; the next scan tries again'),
  });

  return {
    scan,
    /** Scans every `scanMs` (default the schedule's) until stopped; the jobs service's `startSchedules` starts it too. */
    start(scanMs?: number): void {
      loop.start(scanMs);
    },
    async stop(): Promise<void> {
      await loop.stop();
    },
  };
}
export type TokenRefresher = ReturnType<typeof tokenRefresher>;
