import { Cron } from 'croner';
import { ApiError } from './problems.js';

/*
 * Cron expressions of things that may fire at most hourly (scheduled agent tasks, reference 9;
 * report deliveries, whose mailing of rows more often than hourly is a loop, not a report): five
 * fields in croner's syntax (the notifications area's library), in an IANA zone. The rule is kept
 * by the minute field: a single minute means at most one occurrence per hour of the clock,
 * whatever the other fields say, so the check needs no sampling of occurrences.
 */

function invalid(field: string, message: string, detail: string): ApiError {
  return new ApiError('VALIDATION_FAILED', detail, { errors: [{ pointer: `/body/${field}`, message }] });
}

function cronJob(cron: string, timezone: string): Cron {
  // Paused: croner only computes dates here, it never schedules a callback.
  return new Cron(cron, { timezone, mode: '5-part', paused: true });
}

/**
 * The expression with its blanks collapsed; 400 when it is not five fields, or may fire more often
 * than hourly. `what` names the thing scheduled in the refusal ("a scheduled task").
 */
export function checkHourlyCron(input: string, what: string): string {
  const cron = input.trim().replace(/\s+/g, ' ');
  const fields = cron.split(' ');
  if (fields.length !== 5)
    throw invalid('cron', 'is not five fields', `"${cron}" is not a five-field cron expression (minute hour day-of-month month day-of-week).`);
  try {
    cronJob(cron, 'UTC');
  } catch (error) {
    const why = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error);
    throw invalid('cron', 'is not a cron expression', `"${cron}" is not a five-field cron expression: ${why}`);
  }
  const minute = fields[0] as string;
  if (!/^\d{1,2}$/.test(minute))
    throw invalid(
      'cron',
      'may fire more often than hourly',
      `"${cron}" may fire more than once an hour; ${what} runs at most hourly, so its minute field is one minute (such as "0").`,
    );
  if (nextOccurrence(cron, 'UTC', new Date()) === null)
    throw invalid('cron', 'never runs', `"${cron}" names no date that exists (such as February 30), so it would never run.`);
  return cron;
}

/** The IANA zone named, in its canonical spelling; 400 for a name that is not one. */
export function canonicalTimeZone(name: string): string {
  const refuse = () => invalid('timezone', 'is not an IANA time zone', `"${name}" is not an IANA time zone name such as "Europe/Berlin" or "UTC".`);
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) throw refuse();
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    throw refuse();
  }
}

/** The first occurrence strictly after `after`, or null when there is none. */
export function nextOccurrence(cron: string, timezone: string, after: Date): Date | null {
  return cronJob(cron, timezone).nextRun(after) ?? null;
}

/** The latest occurrence at or before `now` from `due` on, and the first after `now`: a scheduler away for several runs the newest only. */
export function catchUp(cron: string, timezone: string, due: Date, now: Date): { latest: Date; following: Date | null } {
  const job = cronJob(cron, timezone);
  const [previous] = job.previousRuns(1, new Date(now.getTime() + 1));
  const latest = previous && previous.getTime() >= due.getTime() ? previous : due;
  return { latest, following: job.nextRun(now) ?? null };
}
