import { describe, expect, it } from 'vitest';
import { catchUp, cronOf, describeSchedule, fieldsOf, nextOccurrence, type ScheduleFields } from '../src/areas/notifications/schedule.js';

/** The occurrences of a schedule from `from` (exclusive) to `to` (inclusive), as UTC ISO strings. */
function occurrences(cron: string, timezone: string, from: string, to: string): string[] {
  const out: string[] = [];
  let at = new Date(from);
  for (;;) {
    const next = nextOccurrence(cron, timezone, at);
    if (next === null || next.getTime() > new Date(to).getTime()) return out;
    out.push(next.toISOString());
    at = next;
  }
}

const schedule = (fields: Partial<ScheduleFields> & Pick<ScheduleFields, 'scheduleType'>): ScheduleFields =>
  fieldsOf({ minute: null, hour: null, dayOfWeek: null, dayOfMonth: null, customCron: null, timezone: 'UTC', ...fields });

describe('notification schedules', () => {
  it('each scheduleType compiles to a five-field cron expression and reads as plain English in its zone', () => {
    const cases: Array<[ScheduleFields, string, string]> = [
      [schedule({ scheduleType: 'HOURLY', minute: 15 }), '15 * * * *', 'Every hour at 15 minutes past the hour (UTC)'],
      [schedule({ scheduleType: 'HOURLY', minute: 0 }), '0 * * * *', 'Every hour, on the hour (UTC)'],
      [schedule({ scheduleType: 'DAILY', minute: 30, hour: 2, timezone: 'Europe/Berlin' }), '30 2 * * *', 'Every day at 02:30 (Europe/Berlin)'],
      [
        schedule({ scheduleType: 'WEEKLY', minute: 0, hour: 9, dayOfWeek: 1, timezone: 'America/New_York' }),
        '0 9 * * 1',
        'Every Monday at 09:00 (America/New_York)',
      ],
      [schedule({ scheduleType: 'MONTHLY', minute: 5, hour: 7, dayOfMonth: 1 }), '5 7 1 * *', 'On day 1 of every month at 07:05 (UTC)'],
      [
        schedule({ scheduleType: 'MONTHLY', minute: 0, hour: 8, dayOfMonth: 31 }),
        '0 8 31 * *',
        'On day 31 of every month at 08:00 (UTC), in months that have a day 31',
      ],
      [
        schedule({ scheduleType: 'CUSTOM', customCron: ' */15  9-17 * * 1-5 ' }),
        '*/15 9-17 * * 1-5',
        'Every 15 minutes, between 09:00 and 17:59, Monday through Friday (UTC)',
      ],
    ];
    for (const [fields, cron, text] of cases) {
      expect(cronOf(fields)).toBe(cron);
      expect(describeSchedule(fields, cronOf(fields))).toBe(text);
    }
    // Fields another type would use are not kept.
    expect(schedule({ scheduleType: 'DAILY', minute: 0, hour: 9, dayOfWeek: 3, customCron: '* * * * *' })).toMatchObject({ dayOfWeek: null, customCron: null });
  });

  it('a custom expression that is not five valid fields, or names no real date, is refused with the reason', () => {
    for (const cron of ['* * * * * *', '61 * * * *', 'every day', '0 9 * *']) {
      expect(() => cronOf(schedule({ scheduleType: 'CUSTOM', customCron: cron }))).toThrow(/not a five-field cron expression/);
    }
    expect(() => cronOf(schedule({ scheduleType: 'CUSTOM', customCron: '0 0 30 2 *' }))).toThrow(/never run/);
  });

  it('spring forward: a daily 02:30 in a zone that skips 02:30 runs once that day (at 03:00), not zero or two times', () => {
    // Europe/Berlin skips 02:00-03:00 on 29 March 2026; America/New_York on 8 March 2026.
    expect(occurrences('30 2 * * *', 'Europe/Berlin', '2026-03-27T12:00:00Z', '2026-03-31T12:00:00Z')).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 03:00 CEST, the first time after the gap
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
      '2026-03-31T00:30:00.000Z',
    ]);
    expect(occurrences('30 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', '2026-03-09T12:00:00Z')).toEqual([
      '2026-03-08T07:00:00.000Z',
      '2026-03-09T06:30:00.000Z',
    ]);
  });

  it('fall back: a daily time that happens twice runs once, at its first occurrence', () => {
    // Europe/Berlin repeats 02:00-03:00 on 25 October 2026; America/New_York repeats 01:00-02:00 on 1 November 2026.
    expect(occurrences('30 2 * * *', 'Europe/Berlin', '2026-10-24T12:00:00Z', '2026-10-26T12:00:00Z')).toEqual([
      '2026-10-25T00:30:00.000Z', // 02:30 CEST; 02:30 CET an hour later is not a second run
      '2026-10-26T01:30:00.000Z',
    ]);
    expect(occurrences('30 1 * * *', 'America/New_York', '2026-10-31T12:00:00Z', '2026-11-02T12:00:00Z')).toEqual([
      '2026-11-01T05:30:00.000Z',
      '2026-11-02T06:30:00.000Z',
    ]);
  });

  it('hourly schedules follow elapsed time: no run in the skipped hour, one in each repeated hour', () => {
    expect(occurrences('30 * * * *', 'Europe/Berlin', '2026-03-29T00:00:00Z', '2026-03-29T02:00:00Z')).toEqual([
      '2026-03-29T00:30:00.000Z',
      '2026-03-29T01:30:00.000Z',
    ]);
    expect(occurrences('30 * * * *', 'Europe/Berlin', '2026-10-25T00:00:00Z', '2026-10-25T02:00:00Z')).toEqual([
      '2026-10-25T00:30:00.000Z',
      '2026-10-25T01:30:00.000Z',
    ]);
  });

  it('a scheduler that was away for several occurrences delivers the newest, and knows the next', () => {
    const { latest, following } = catchUp('0 9 * * *', 'UTC', new Date('2026-05-01T09:00:00Z'), new Date('2026-05-04T10:00:00Z'));
    expect(latest.toISOString()).toBe('2026-05-04T09:00:00.000Z');
    expect(following?.toISOString()).toBe('2026-05-05T09:00:00.000Z');
    // Past the step bound, the newest is looked up backwards from now.
    const far = catchUp('* * * * *', 'UTC', new Date('2026-01-01T00:00:00Z'), new Date('2026-05-04T10:00:30Z'), 10);
    expect(far.latest.toISOString()).toBe('2026-05-04T10:00:00.000Z');
    expect(far.following?.toISOString()).toBe('2026-05-04T10:01:00.000Z');
  });
});
