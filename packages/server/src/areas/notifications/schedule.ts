import { Cron } from 'croner';
import cronstrue from 'cronstrue';
import { ApiError } from '../../shared/problems.js';

/*
 * A notification's schedule: the reference's `scheduleType` with its fields, compiled to a
 * five-field cron expression, or a `customCron` checked here; its next occurrences in an IANA
 * time zone; and a sentence describing it.
 *
 * Daylight-saving transitions follow croner's fixed-time rule: a schedule whose minute and hour
 * fields hold no wildcard or step (a daily 02:30, `30 2,14 * * *`) runs once on a day whose
 * 02:30 is skipped (at the first time after the gap, 03:00) and once, not twice, on a day whose
 * 02:30 happens twice (the first of them). A schedule with a wildcard hour (hourly) follows
 * elapsed time instead: no run in the skipped hour, one in each of the repeated ones.
 */

export const SCHEDULE_TYPES = ['HOURLY', 'DAILY', 'WEEKLY', 'MONTHLY', 'CUSTOM'] as const;
export type ScheduleType = (typeof SCHEDULE_TYPES)[number];

export interface ScheduleFields {
  scheduleType: ScheduleType;
  minute: number | null;
  hour: number | null;
  dayOfWeek: number | null;
  dayOfMonth: number | null;
  customCron: string | null;
  timezone: string;
}

/** The fields each type needs, beyond the ones of the type before it (docs/decisions/notifications.md). */
const REQUIRED: Record<ScheduleType, Array<keyof ScheduleFields>> = {
  HOURLY: ['minute'],
  DAILY: ['minute', 'hour'],
  WEEKLY: ['minute', 'hour', 'dayOfWeek'],
  MONTHLY: ['minute', 'hour', 'dayOfMonth'],
  CUSTOM: ['customCron'],
};

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** The longest custom expression accepted: five fields with long lists still fit. */
const MAX_CRON_LENGTH = 200;

function invalid(field: string, message: string, detail: string): ApiError {
  return new ApiError('VALIDATION_FAILED', detail, { errors: [{ pointer: `/body/${field}`, message }] });
}

/** The stored fields of a type: the ones it uses, the others null (they are not kept). */
export function fieldsOf(schedule: ScheduleFields): ScheduleFields {
  const used = new Set(REQUIRED[schedule.scheduleType]);
  const keep = <K extends keyof ScheduleFields>(k: K) => (used.has(k) ? schedule[k] : null);
  return {
    scheduleType: schedule.scheduleType,
    minute: keep('minute') as number | null,
    hour: keep('hour') as number | null,
    dayOfWeek: keep('dayOfWeek') as number | null,
    dayOfMonth: keep('dayOfMonth') as number | null,
    customCron: schedule.customCron === null || !used.has('customCron') ? null : schedule.customCron.trim(),
    timezone: schedule.timezone,
  };
}

/** Every field the type needs is there (a 400 naming the first missing one), and the zone is known. */
export function checkSchedule(schedule: ScheduleFields): void {
  for (const field of REQUIRED[schedule.scheduleType]) {
    if (schedule[field] === null || schedule[field] === undefined) {
      throw invalid(field, `is required for scheduleType ${schedule.scheduleType}`, `A ${schedule.scheduleType} schedule needs \`${field}\`.`);
    }
  }
}

/**
 * The IANA zone named, in its canonical spelling (`utc` is `UTC`); 400 for a name that is not a
 * zone, and for UTC offsets such as `+02:00`, which have no daylight-saving rules to follow.
 */
export function canonicalTimeZone(name: string, field = 'timezone'): string {
  const refuse = () => invalid(field, 'is not an IANA time zone', `"${name}" is not an IANA time zone name such as "Europe/Berlin" or "UTC".`);
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) throw refuse();
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    throw refuse();
  }
}

/** The cron expression a schedule compiles to; a custom one is checked (five fields, croner's syntax) and kept as written. */
export function cronOf(schedule: ScheduleFields): string {
  const { minute, hour, dayOfWeek, dayOfMonth } = schedule;
  switch (schedule.scheduleType) {
    case 'HOURLY':
      return `${minute} * * * *`;
    case 'DAILY':
      return `${minute} ${hour} * * *`;
    case 'WEEKLY':
      return `${minute} ${hour} * * ${dayOfWeek}`;
    case 'MONTHLY':
      return `${minute} ${hour} ${dayOfMonth} * *`;
    case 'CUSTOM': {
      const cron = (schedule.customCron ?? '').trim().replace(/\s+/g, ' ');
      if (cron.length > MAX_CRON_LENGTH)
        throw invalid('customCron', `is longer than ${MAX_CRON_LENGTH} characters`, `The cron expression is longer than ${MAX_CRON_LENGTH} characters.`);
      try {
        cronJob(cron, 'UTC');
      } catch (error) {
        const why = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error);
        throw invalid(
          'customCron',
          'is not a cron expression',
          `"${cron}" is not a five-field cron expression (minute hour day-of-month month day-of-week): ${why}`,
        );
      }
      if (nextOccurrence(cron, 'UTC', new Date()) === null)
        throw invalid('customCron', 'never runs', `"${cron}" names no date that exists (such as February 30), so it would never run.`);
      return cron;
    }
  }
}

function cronJob(cron: string, timezone: string): Cron {
  // Paused: croner only computes dates here, it never schedules a callback.
  return new Cron(cron, { timezone, mode: '5-part', fixedTimeRule: 'no-wildcard', paused: true });
}

/** The first occurrence strictly after `after`, or null when there is none. */
export function nextOccurrence(cron: string, timezone: string, after: Date): Date | null {
  return cronJob(cron, timezone).nextRun(after) ?? null;
}

/**
 * The latest occurrence at or before `now` from `due` on, and the first after `now`: a scheduler
 * that was away for several occurrences delivers the newest of them only. Bounded: past
 * `limit` steps the newest is looked up from `now` backwards instead.
 */
export function catchUp(cron: string, timezone: string, due: Date, now: Date, limit = 1000): { latest: Date; following: Date | null } {
  const job = cronJob(cron, timezone);
  let latest = due;
  for (let i = 0; i < limit; i++) {
    const next = job.nextRun(latest);
    if (next === null || next.getTime() > now.getTime()) return { latest, following: next ?? null };
    latest = next;
  }
  const [previous] = job.previousRuns(1, now);
  return { latest: previous ?? latest, following: job.nextRun(now) ?? null };
}

const pad = (n: number | null) => String(n ?? 0).padStart(2, '0');

/** The schedule in plain English, with its time zone. */
export function describeSchedule(schedule: ScheduleFields, cron: string): string {
  const { minute, hour, dayOfWeek, dayOfMonth, timezone } = schedule;
  const zone = ` (${timezone})`;
  switch (schedule.scheduleType) {
    case 'HOURLY':
      return minute === 0 ? `Every hour, on the hour${zone}` : `Every hour at ${minute} minute${minute === 1 ? '' : 's'} past the hour${zone}`;
    case 'DAILY':
      return `Every day at ${pad(hour)}:${pad(minute)}${zone}`;
    case 'WEEKLY':
      return `Every ${DAYS[dayOfWeek ?? 0]} at ${pad(hour)}:${pad(minute)}${zone}`;
    case 'MONTHLY':
      return `On day ${dayOfMonth} of every month at ${pad(hour)}:${pad(minute)}${zone}${(dayOfMonth ?? 0) > 28 ? `, in months that have a day ${dayOfMonth}` : ''}`;
    case 'CUSTOM':
      try {
        return `${cronstrue.toString(cron, { use24HourTimeFormat: true, verbose: false })}${zone}`;
      } catch {
        return `On the cron schedule "${cron}"${zone}`;
      }
  }
}
