import type { Insertable } from 'kysely';
import type { Store } from '../db/database.js';
import { lockKey, serialized } from '../db/transactions.js';
import type { RuntimeEnvironmentType, RuntimeLogTable } from '../db/tables.js';
import { isSecretName } from '../secrets/secret-names.js';
import { insertLogs, trimLogs } from './runtimes.store.js';

/**
 * Secret values shorter than this are not looked for anywhere in a line (a `1` would blank every
 * digit); `NAME=value` still hides them, whatever their length.
 */
const REDACT_MIN = 4;
export const REDACTED = '[REDACTED]';

/** What to keep out of a pod's log lines: its secret variables (by name and by value) and other secret values. */
export interface Redaction {
  names: RegExp | null;
  values: readonly string[];
}

/**
 * The redaction for a runtime started with `env`: the values of its secret variables (names with
 * PASS, SECRET, TOKEN, KEY or CREDENTIAL, the ones that read back masked) wherever they appear,
 * and whatever follows `NAME=` or `NAME:` for those names; plus `extraValues` (the pod's own
 * secret). Other variables read back in clear through the API, so their values stay readable in
 * the log too ("DB_TYPE=postgres needs DB_URL").
 */
export function redactionOf(env: Readonly<Record<string, string>>, extraValues: readonly string[] = []): Redaction {
  const names = Object.keys(env).filter(isSecretName);
  const values = [...names.map((name) => env[name] ?? ''), ...extraValues].filter((v) => v.length >= REDACT_MIN);
  // Longest first, so a secret that contains another is replaced whole.
  values.sort((a, b) => b.length - a.length);
  const escaped = names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return {
    names: names.length === 0 ? null : new RegExp(`\\b(${escaped.join('|')})(["']?\\s*[=:]\\s*["']?)[^\\s"',;&]+`, 'g'),
    values,
  };
}

/**
 * Replaces the secrets of `redaction` in `line` with [REDACTED]: a runtime (or a library in it)
 * that prints a connection string or a token must not put the value into the log table, which
 * is not encrypted.
 */
export function redact(line: string, redaction: Redaction): string {
  let out = line;
  for (const value of redaction.values) if (out.includes(value)) out = out.split(value).join(REDACTED);
  if (redaction.names) out = out.replace(redaction.names, `$1$2${REDACTED}`);
  return out;
}

export interface PodLogTarget {
  tenantId: number;
  deploymentId: number;
  type: RuntimeEnvironmentType;
  pod: string;
  /** What to keep out of the log. */
  redaction: Redaction;
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
      message: redact(message, target.redaction),
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
