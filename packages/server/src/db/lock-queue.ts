/**
 * This process's waiters for lock keys, first come first served. A serialized transaction enters
 * the queue of each of its keys before it takes a connection, so the requests waiting on one busy
 * deployment hold no pool connection between them but the one whose turn it is, and the pool stays
 * free for every other deployment. The database lock still orders processes against each other.
 */
export class LockQueue {
  /** A key is held while it is in the map; its array holds the waiters behind the holder. */
  readonly #keys = new Map<string, Waiter[]>();

  /**
   * Takes every key, in the order given (callers sort them, so two callers never wait on each
   * other in a cycle), and returns the function that gives them back. Waiting longer than
   * `timeoutMs` in all gives up with `onTimeout()`, holding nothing.
   */
  async enter(keys: readonly string[], timeoutMs: number, onTimeout: () => Error): Promise<() => void> {
    const held: string[] = [];
    const deadline = performance.now() + timeoutMs;
    try {
      for (const key of keys) {
        await this.#take(key, deadline, onTimeout);
        held.push(key);
      }
    } catch (error) {
      this.#give(held);
      throw error;
    }
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#give(held);
    };
  }

  /** How many callers hold or wait for `key` (for tests and diagnostics). */
  depth(key: string): number {
    const waiters = this.#keys.get(key);
    return waiters === undefined ? 0 : waiters.length + 1;
  }

  #take(key: string, deadline: number, onTimeout: () => Error): Promise<void> | undefined {
    const waiters = this.#keys.get(key);
    if (waiters === undefined) {
      this.#keys.set(key, []);
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(
        () => {
          if (settled) return;
          settled = true;
          const at = waiters.indexOf(waiter);
          if (at !== -1) waiters.splice(at, 1);
          reject(onTimeout());
        },
        Math.max(0, deadline - performance.now()),
      );
      const waiter: Waiter = () => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        resolve();
        return true;
      };
      waiters.push(waiter);
    });
  }

  /** Hands each key to its next waiter, or frees it; the last taken first. */
  #give(keys: readonly string[]): void {
    for (const key of [...keys].reverse()) this.#handOver(key);
  }

  /**
   * The next waiter gets the key on a later turn of the event loop, not at once: SQLite's driver
   * is synchronous, and handing over in the same run of promise callbacks would let the writers of
   * one busy deployment take turns without ever letting another request's I/O in between.
   */
  #handOver(key: string): void {
    const next = this.#keys.get(key)?.shift();
    if (next === undefined) {
      this.#keys.delete(key);
      return;
    }
    setImmediate(() => {
      // It gave up in the meantime: the key goes on to the one after.
      if (!next()) this.#handOver(key);
    });
  }
}

/** Called when its turn comes; false when it has already given up. */
type Waiter = () => boolean;
