/**
 * Query results kept for a short time per (query, caller's security context): a dashboard's
 * widgets and its viewers' refreshes ask the same thing within seconds. It lives in the runtime,
 * which runs one build: a new build starts a new runtime, so nothing survives a build. Bounded by
 * entries and by the bytes of the results it holds.
 */
export class ResultCache<T> {
  readonly #entries = new Map<string, { at: number; value: Promise<T>; bytes: number; ttlMs?: number }>();
  #bytes = 0;

  constructor(private readonly options: { ttlMs: number; maxEntries: number; maxBytes: number }) {}

  /**
   * The cached answer for `key`, or `compute()`'s (shared by concurrent callers; a failure is not
   * kept). `renew`: compute afresh even when an answer is cached, and keep the new one. `ttlMs`:
   * how long this answer is kept (the cube's refresh key), else the cache's.
   */
  async get(key: string, compute: () => Promise<T>, sizeOf: (value: T) => number, renew = false, ttlMs = this.options.ttlMs): Promise<T> {
    if (this.options.ttlMs <= 0) return compute();
    const now = Date.now();
    const hit = this.#entries.get(key);
    if (hit && !renew && now - hit.at < (hit.ttlMs ?? this.options.ttlMs)) return hit.value;
    if (hit) this.#drop(key);
    const value = compute();
    const entry = { at: now, value, bytes: 0, ttlMs };
    this.#entries.set(key, entry);
    try {
      const result = await value;
      entry.bytes = sizeOf(result);
      this.#bytes += entry.bytes;
      if (entry.bytes > this.options.maxBytes / 4) this.#drop(key);
      this.#evict();
      return result;
    } catch (error) {
      if (this.#entries.get(key) === entry) this.#drop(key);
      throw error;
    }
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#bytes -= entry.bytes;
    this.#entries.delete(key);
  }

  /** Oldest first, until within both bounds. */
  #evict(): void {
    for (const key of this.#entries.keys()) {
      if (this.#entries.size <= this.options.maxEntries && this.#bytes <= this.options.maxBytes) return;
      this.#drop(key);
    }
  }
}
