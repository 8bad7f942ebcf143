import type { Insertable } from 'kysely';
import type { Store } from '../db/database.js';
import { lockKey, serialized } from '../db/transactions.js';
import type { RuntimeEnvironmentType, RuntimeLogTable } from '../db/tables.js';
import { insertLogs, trimLogs } from './runtimes.store.js';

/** Values shorter than this are not looked for in log lines (a `1` would blank every digit). */
const REDACT_MIN = 6;
export const REDACTED = '[REDACTED]';

/**
 * Replaces every environment-variable value of `REDACT_MIN` characters or more in `line` with
 * [REDACTED]: a runtime (or a library in it) that prints a connection string or a token must not
 * put the value into the log table, which is not encrypted.
 */
export function redact(line: string, values: readonly string[]): string {
  let out = line;
  for (const value of values) if (value.length >= REDACT_MIN && out.includes(value)) out = out.split(value).join(REDACTED);
  return out;
}

export interface PodLogTarget {
  tenantId: number;
  deploymentId: number;
  type: RuntimeEnvironmentType;
  pod: string;
  /** Values to keep out of the log. */
  secrets: readonly string[];
}

/**
 * Runtime logs, written in batches (a chatty runtime costs one INSERT per flush, not per line) and
 * trimmed to the newest `keepPerDeployment` lines of each deployment, so they are bounded and
 * survive restarts of pods and of servers.
 */
export class LogSink {
  #pending: Array<Insertable<RuntimeLogTable>> = [];
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> = Promise.resolve();
  readonly #written = new Map<number, number>();

  constructor(
    private readonly store: Store,
    private readonly options: { flushMs: number; keepPerDeployment: number; onError: (error: Error) => void },
  ) {}

  write(target: PodLogTarget, message: string): void {
    this.#pending.push({
      tenant_id: target.tenantId,
      deployment_id: target.deploymentId,
      environment_type: target.type,
      pod: target.pod,
      container: 'MAIN',
      at: new Date().toISOString(),
      message: redact(message, target.secrets),
    });
    if (this.#pending.length >= 500) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), this.options.flushMs);
  }

  /** Writes what is pending; resolves once it (and every earlier flush) is stored. */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const batch = this.#pending;
    this.#pending = [];
    this.#flushing = this.#flushing.then(async () => {
      if (batch.length === 0) return;
      try {
        // Under the deployments' locks: on PostgreSQL, ids are drawn in one order and committed in
        // another when two processes write at once, and a reader following by id would skip the
        // line that committed late. Serialised per deployment, each deployment's ids commit in order.
        const keys = [...new Set(batch.map((row) => row.deployment_id))].sort((a, b) => a - b).map(lockKey.runtimeLogs);
        await serialized(this.store, keys, (trx) => insertLogs(trx, batch));
        await this.#trim(batch);
      } catch (error) {
        // A deployment deleted meanwhile (its lines refer to it) or a store that is closing.
        this.options.onError(error as Error);
      }
    });
    return this.#flushing;
  }

  /** Trims a deployment after every tenth of its allowance written, so the table stays near the bound. */
  async #trim(batch: Array<Insertable<RuntimeLogTable>>): Promise<void> {
    const step = Math.max(1, Math.floor(this.options.keepPerDeployment / 10));
    const counts = new Map<number, number>();
    for (const row of batch) counts.set(row.deployment_id, (counts.get(row.deployment_id) ?? 0) + 1);
    for (const [deploymentId, n] of counts) {
      const written = (this.#written.get(deploymentId) ?? 0) + n;
      if (written >= step) {
        await trimLogs(this.store.db, deploymentId, this.options.keepPerDeployment);
        this.#written.set(deploymentId, 0);
      } else this.#written.set(deploymentId, written);
    }
  }
}
