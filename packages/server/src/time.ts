/** Timestamps are ISO 8601 UTC strings with milliseconds, in the API and in the store alike. */
export function now(): string {
  return new Date().toISOString();
}
