import type { Db } from '../../db/tables.js';
import { recordLastUsed } from './api-keys.store.js';

/**
 * `lastUsedAt` without a write on every request: uses are kept in memory and flushed together
 * every `intervalMs` and at shutdown. A key seen twice between flushes costs one write.
 */
export class LastUsedRecorder {
  #pending = new Map<number, string>();
  #timer: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    intervalMs = 30_000,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    this.#timer = setInterval(() => void this.flush(), intervalMs);
    this.#timer.unref();
  }

  touch(keyId: number, at: string): void {
    this.#pending.set(keyId, at);
  }

  async flush(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    try {
      await recordLastUsed(this.db, batch);
    } catch (error) {
      this.onError(error);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }
}
