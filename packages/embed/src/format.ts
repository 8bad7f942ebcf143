/**
 * Numbers and dates for the viewer: Intl in the page's locale and time zone (URL parameters
 * first, then the session's settings, then the account's, then the browser's). Queries carry the
 * same time zone (widgets.ts), so days and months are the viewer's.
 */
export interface Formats {
  locale: string;
  timeZone: string;
  number(value: unknown): string;
  value(value: unknown, kind?: 'measure' | 'dimension' | 'time'): string;
}

function supportedLocale(candidate: string | null | undefined): string | null {
  if (!candidate) return null;
  try {
    return Intl.NumberFormat.supportedLocalesOf([candidate])[0] ?? null;
  } catch {
    return null;
  }
}

function supportedZone(candidate: string | null | undefined): string | null {
  if (!candidate) return null;
  try {
    new Intl.DateTimeFormat('en', { timeZone: candidate });
    return candidate;
  } catch {
    return null;
  }
}

const NAIVE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/;

export function formats(locales: Array<string | null | undefined>, zones: Array<string | null | undefined>): Formats {
  const locale = locales.map(supportedLocale).find((l) => l !== null) ?? navigator.language ?? 'en-US';
  const timeZone = zones.map(supportedZone).find((z) => z !== null) ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const numbers = new Intl.NumberFormat(locale, { maximumFractionDigits: 2 });
  const zoned = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone });
  // The data API answers times as Cube does: the query's wall-clock time without a zone
  // (`2026-01-02T00:00:00.000` for a day in Berlin), so they are shown as they are, without the hour at midnight.
  const wallDate = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' });
  const wallDateTime = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
  const number = (value: unknown) => (typeof value === 'number' ? numbers.format(value) : String(value));
  const time = (value: string): string | null => {
    const naive = NAIVE_TIME.test(value);
    const at = new Date(naive ? `${value.length === 10 ? `${value}T00:00:00` : value}Z` : value);
    if (Number.isNaN(at.getTime())) return null;
    if (!naive) return zoned.format(at);
    return at.getUTCHours() === 0 && at.getUTCMinutes() === 0 ? wallDate.format(at) : wallDateTime.format(at);
  };
  return {
    locale,
    timeZone,
    number,
    value(value, kind) {
      if (value === null || value === undefined) return '—';
      if (typeof value === 'number') return number(value);
      if (typeof value === 'string') {
        if (kind === 'measure' && /^-?\d+(\.\d+)?$/.test(value)) return number(Number(value));
        if (kind === 'time' || NAIVE_TIME.test(value) || /Z|[+-]\d{2}:\d{2}$/.test(value)) return time(value) ?? value;
        return value;
      }
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
    },
  };
}
