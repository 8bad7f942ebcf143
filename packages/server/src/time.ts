/** The app's one clock: services read the time from it, and tests move it (`buildApp({ now })`). */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

/** Timestamps are ISO 8601 UTC strings with milliseconds, in the API and in the store alike. */
export function timestamp(clock: Clock): string {
  return clock().toISOString();
}
