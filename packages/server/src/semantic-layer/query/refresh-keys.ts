import { parseInterval, UNIT_MS } from './dialect.js';

/** A refresh key's `every` (`30 seconds`, `1 hour`, `1 day`) in milliseconds; undefined for none or a cron expression. */
export function everyMs(every: string | undefined): number | undefined {
  const interval = parseInterval(every);
  const unit = interval && interval.count >= 0 ? UNIT_MS[interval.unit] : undefined;
  return unit === undefined ? undefined : interval!.count * unit;
}

/** How often a refresh key's SQL is asked again when it has no `every` (Cube's default). */
export const DEFAULT_REFRESH_CHECK_MS = 10_000;
