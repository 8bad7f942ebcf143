import { createHash } from 'node:crypto';
import type { PythonAnalysisFilteredRun } from './python-runs.schemas.js';

/**
 * Successful runs, briefly, per (report, code, SQL, viewer) (reference 3.7; failures are never
 * kept). In this process's memory only: a run is cheap to repeat and holds one viewer's rows,
 * which should not outlive a short window or reach the database.
 */
export class PythonRunCache {
  private readonly entries = new Map<string, { expires: number; run: PythonAnalysisFilteredRun }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 1_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key of a run: the viewer is the whole row-level context the rows were read with, not only a name. */
  static key(parts: { tenantId: number; reportId: number; code: string; sql: string; viewer: unknown }): string {
    return createHash('sha256')
      .update(JSON.stringify([parts.tenantId, parts.reportId, parts.code, parts.sql, parts.viewer]))
      .digest('hex');
  }

  get(key: string): PythonAnalysisFilteredRun | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expires <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.run;
  }

  set(key: string, run: PythonAnalysisFilteredRun): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { expires: this.now() + this.ttlMs, run });
    // The oldest go first once full.
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }
}
