import type { Command } from 'commander';
import type {
  CreateNotificationInput,
  Notification,
  NotificationDelivery,
  NotificationRecipient,
  NotificationRecipientInput,
  NotificationRecipientRef,
  UpdateNotificationInput,
} from '@mapi/client';
import { run } from '../context.js';
import { EXIT, UsageError } from '../errors.js';
import { parseId } from '../items.js';
import { all, note, plural, shortDate, writeJson, writeTable, type Column } from '../output.js';
import { coversEach } from '../operations.js';

const HELP = `
A notification delivers one published dashboard on a schedule (admin only). --type is HOURLY
(needs --minute), DAILY (--minute, --hour), WEEKLY (adds --day-of-week, 0 = Sunday), MONTHLY
(adds --day-of-month) or CUSTOM (--cron, five fields); --timezone is an IANA zone (default UTC).
Recipients are user:<id>, user:<email>, or embed:<embedTenant>/<externalId> (add an email with
=<email> when the external id is not one); to remove an embed user, give embed:<embedTenant>/<embedUserId>.

Examples:
  $ mapi notifications create 3 --dashboard 12 --type WEEKLY --minute 0 --hour 9 --day-of-week 1 --timezone Europe/Berlin
  $ mapi notifications list 3
  $ mapi notifications add 3 7 user:ann@example.com embed:acme/u-17=bo@acme.example
  $ mapi notifications update 3 7 --disable --sending off
  $ mapi notifications deliveries 3 7
  $ mapi notifications send-now 3 7 --wait
`;

const COLUMNS: Column<Notification>[] = [
  { header: 'ID', value: (n) => n.id, align: 'right' },
  { header: 'DASHBOARD', value: (n) => n.dashboardId, align: 'right' },
  { header: 'ON', value: (n) => (n.isEnabled ? 'yes' : 'no') },
  { header: 'SEND', value: (n) => (n.notificationEnabled ? 'yes' : 'no') },
  { header: 'FORMAT', value: (n) => n.notificationFormat },
  { header: 'NEXT RUN (UTC)', value: (n) => shortDate(n.nextRunAt) },
  { header: 'SCHEDULE', value: (n) => n.humanReadableSchedule },
];

const RECIPIENT_COLUMNS: Column<NotificationRecipient>[] = [
  { header: 'TYPE', value: (r) => r.type },
  { header: 'ID', value: (r) => r.userId ?? r.embedUserId ?? r.channelId },
  { header: 'EMBED TENANT', value: (r) => r.embedTenantName },
  { header: 'EXTERNAL ID', value: (r) => r.externalId },
  { header: 'EMAIL', value: (r) => r.email },
];

const DELIVERY_COLUMNS: Column<NotificationDelivery>[] = [
  { header: 'ID', value: (d) => d.id, align: 'right' },
  { header: 'SCHEDULED FOR (UTC)', value: (d) => shortDate(d.scheduledFor) },
  { header: 'TRIGGER', value: (d) => d.trigger },
  { header: 'STATUS', value: (d) => d.status },
  { header: 'SENT', value: (d) => `${d.recipients.filter((r) => r.status === 'sent').length}/${d.recipients.length}` },
  { header: 'MESSAGE', value: (d) => d.message },
];

interface ScheduleOptions {
  type?: string;
  minute?: string;
  hour?: string;
  dayOfWeek?: string;
  dayOfMonth?: string;
  cron?: string;
  timezone?: string;
  format?: string;
  send?: boolean;
}

const number = (value: string, flag: string): number => {
  if (!/^[0-9]{1,2}$/.test(value)) throw new UsageError(`${flag} must be a whole number, got "${value}".`);
  return Number(value);
};

/** The schedule and delivery fields the flags set; the server checks ranges and what each type needs. */
function scheduleInput(options: ScheduleOptions): Omit<UpdateNotificationInput, 'isEnabled'> {
  const input: Omit<UpdateNotificationInput, 'isEnabled'> = {};
  if (options.type !== undefined) {
    const type = options.type.toUpperCase();
    if (!['HOURLY', 'DAILY', 'WEEKLY', 'MONTHLY', 'CUSTOM'].includes(type))
      throw new UsageError(`--type must be HOURLY, DAILY, WEEKLY, MONTHLY or CUSTOM, got "${options.type}".`);
    input.scheduleType = type as NonNullable<UpdateNotificationInput['scheduleType']>;
  }
  if (options.minute !== undefined) input.minute = number(options.minute, '--minute');
  if (options.hour !== undefined) input.hour = number(options.hour, '--hour');
  if (options.dayOfWeek !== undefined) input.dayOfWeek = number(options.dayOfWeek, '--day-of-week');
  if (options.dayOfMonth !== undefined) input.dayOfMonth = number(options.dayOfMonth, '--day-of-month');
  if (options.cron !== undefined) input.customCron = options.cron;
  if (options.timezone !== undefined) input.timezone = options.timezone;
  if (options.format !== undefined) {
    if (options.format !== 'png' && options.format !== 'pdf') throw new UsageError(`--format must be png or pdf, got "${options.format}".`);
    input.notificationFormat = options.format;
  }
  if (options.send === false) input.notificationEnabled = false;
  return input;
}

/** `user:<id>`, `user:<email>`, `embed:<tenant>/<externalId>[=<email>]`. */
export function parseRecipient(text: string): NotificationRecipientInput {
  const [kind, ...rest] = text.split(':');
  const value = rest.join(':');
  if (kind === 'user' && value !== '') return /^[1-9][0-9]*$/.test(value) ? { type: 'USER', userId: Number(value) } : { type: 'USER', email: value };
  if (kind === 'embed') {
    const slash = value.indexOf('/');
    if (slash > 0 && slash < value.length - 1) {
      const [externalId, email] = value.slice(slash + 1).split('=');
      return { type: 'EMBED_USER', embedTenantName: value.slice(0, slash), externalId: externalId as string, ...(email ? { email } : {}) };
    }
  }
  throw new UsageError(`"${text}" is not a recipient: give user:<id>, user:<email> or embed:<embedTenant>/<externalId>[=<email>].`);
}

/** `user:<id>` or `embed:<tenant>/<embedUserId>`, as a removal names them. */
export function parseRecipientRef(text: string): NotificationRecipientRef {
  const user = /^user:([1-9][0-9]*)$/.exec(text);
  if (user) return { type: 'USER', id: Number(user[1]) };
  const embed = /^embed:([^/]+)\/([1-9][0-9]*)$/.exec(text);
  if (embed) return { type: 'EMBED_USER', embedTenantName: embed[1] as string, id: Number(embed[2]) };
  throw new UsageError(`"${text}" does not name a recipient to remove: give user:<userId> or embed:<embedTenant>/<embedUserId>.`);
}

function withScheduleFlags(command: Command): Command {
  return command
    .option('--type <type>', 'HOURLY, DAILY, WEEKLY, MONTHLY or CUSTOM')
    .option('--minute <n>', 'minute, 0-59')
    .option('--hour <n>', 'hour, 0-23')
    .option('--day-of-week <n>', 'day of the week, 0-6 (0 = Sunday)')
    .option('--day-of-month <n>', 'day of the month, 1-31')
    .option('--cron <expression>', 'five-field cron expression (CUSTOM)')
    .option('--timezone <zone>', 'IANA time zone, e.g. Europe/Berlin')
    .option('--format <format>', 'png or pdf');
}

function show(context: { json: boolean }, notification: Notification, what: string): void {
  if (context.json) writeJson(notification);
  else {
    note(`${what} notification ${notification.id}: ${notification.humanReadableSchedule}${notification.isEnabled ? '' : ' (off)'}.`);
    writeTable(COLUMNS, [notification], '');
  }
}

export function registerNotifications(program: Command): void {
  const group = program.command('notifications').description('Scheduled deliveries of published dashboards, their recipients and deliveries history (admin)');
  group.addHelpText('after', HELP);

  group
    .command('list <deploymentId>')
    .alias('ls')
    .option('--dashboard <id>', 'only the notifications of this dashboard')
    .option('--recipient-email <email>', 'only the notifications this console user receives')
    .description("List a deployment's notifications, newest first")
    .addHelpText('after', '\nExamples:\n  $ mapi notifications list 3\n  $ mapi notifications list 3 --dashboard 12 --json\n')
    .action(
      run(async (context, deploymentArg: string, options: { dashboard?: string; recipientEmail?: string }) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const query = {
          ...(options.dashboard ? { dashboardId: parseId(options.dashboard, '--dashboard') } : {}),
          ...(options.recipientEmail ? { recipientEmail: options.recipientEmail } : {}),
        };
        const rows = await all(context.client().notifications.list(deploymentId, query));
        if (context.json) writeJson(rows);
        else writeTable(COLUMNS, rows, 'No notifications.');
      }),
    );

  withScheduleFlags(group.command('create <deploymentId>'))
    .option('--no-send', 'render into the deliveries history but send nothing')
    .requiredOption('--dashboard <id>', 'the published dashboard: its id, or its public id')
    .description('Schedule deliveries of a published dashboard (on, no recipients yet)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi notifications create 3 --dashboard 12 --type DAILY --minute 30 --hour 7\n  $ mapi notifications create 3 --dashboard 12 --type CUSTOM --cron "0 9 * * 1-5" --timezone America/New_York --format pdf\n',
    )
    .action(
      run(async (context, deploymentArg: string, options: ScheduleOptions & { dashboard: string }) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        if (options.type === undefined) throw new UsageError('--type is required: HOURLY, DAILY, WEEKLY, MONTHLY or CUSTOM.');
        const dashboard = /^[1-9][0-9]*$/.test(options.dashboard) ? { dashboardId: Number(options.dashboard) } : { dashboardPublicId: options.dashboard };
        const input = { ...scheduleInput(options), ...dashboard } as CreateNotificationInput;
        show(context, await context.client().notifications.create(deploymentId, input), 'Created');
      }),
    );

  group
    .command('get <deploymentId> <id>')
    .description('Show a notification')
    .addHelpText('after', '\nExamples:\n  $ mapi notifications get 3 7 --json\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string) => {
        const notification = await context.client().notifications.get(parseId(deploymentArg, 'deploymentId'), parseId(idArg, 'id'));
        if (context.json) writeJson(notification);
        else writeTable(COLUMNS, [notification], '');
      }),
    );

  withScheduleFlags(group.command('update <deploymentId> <id>'))
    .option('--enable', 'switch the schedule on')
    .option('--disable', 'switch the schedule off')
    .option('--sending <onOrOff>', 'on: send mails; off: render into the history only')
    .description('Change a notification: only the flags given change')
    .addHelpText('after', '\nExamples:\n  $ mapi notifications update 3 7 --hour 8 --timezone Europe/Paris\n  $ mapi notifications update 3 7 --disable\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string, options: ScheduleOptions & { enable?: boolean; disable?: boolean; sending?: string }) => {
        if (options.enable && options.disable) throw new UsageError('Give --enable or --disable, not both.');
        const input: UpdateNotificationInput = { ...scheduleInput(options) };
        if (options.enable) input.isEnabled = true;
        if (options.disable) input.isEnabled = false;
        if (options.sending !== undefined) {
          if (options.sending !== 'on' && options.sending !== 'off') throw new UsageError(`--sending must be on or off, got "${options.sending}".`);
          input.notificationEnabled = options.sending === 'on';
        }
        show(context, await context.client().notifications.update(parseId(deploymentArg, 'deploymentId'), parseId(idArg, 'id'), input), 'Updated');
      }),
    );

  group
    .command('delete <deploymentId> <id>')
    .alias('rm')
    .description('Delete a notification with its recipients and history')
    .addHelpText('after', '\nExamples:\n  $ mapi notifications delete 3 7\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string) => {
        const id = parseId(idArg, 'id');
        await context.client().notifications.delete(parseId(deploymentArg, 'deploymentId'), id);
        if (context.json) writeJson({ deleted: id });
        else note(`Deleted notification ${id}.`);
      }),
    );

  group
    .command('recipients <deploymentId> <id>')
    .description("List a notification's recipients, newest first")
    .addHelpText('after', '\nExamples:\n  $ mapi notifications recipients 3 7\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string) => {
        const rows = await all(context.client().notifications.recipients(parseId(deploymentArg, 'deploymentId'), parseId(idArg, 'id')));
        if (context.json) writeJson(rows);
        else writeTable(RECIPIENT_COLUMNS, rows, 'No recipients.');
      }),
    );

  group
    .command('add <deploymentId> <id> <recipients...>')
    .description('Add recipients (idempotent; unknown embed users are provisioned)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi notifications add 3 7 user:12 user:ann@example.com\n  $ mapi notifications add 3 7 embed:acme/bo@acme.example embed:acme/u-17=cy@acme.example\n',
    )
    .action(
      run(async (context, deploymentArg: string, idArg: string, recipients: string[]) => {
        const result = await context
          .client()
          .notifications.addRecipients(parseId(deploymentArg, 'deploymentId'), parseId(idArg, 'id'), recipients.map(parseRecipient));
        if (context.json) writeJson(result);
        else
          note(
            `Added ${plural(result.createdRecipients.length, 'recipient')}; ${result.updatedRecipients.length} updated, ${result.unchangedRecipients.length} unchanged.`,
          );
      }),
    );

  group
    .command('remove <deploymentId> <id> <recipients...>')
    .description('Remove recipients; ones not subscribed are skipped')
    .addHelpText('after', '\nExamples:\n  $ mapi notifications remove 3 7 user:12 embed:acme/40\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string, recipients: string[]) => {
        const refs = recipients.map(parseRecipientRef);
        await context.client().notifications.removeRecipients(parseId(deploymentArg, 'deploymentId'), parseId(idArg, 'id'), refs);
        if (context.json) writeJson({ removed: refs.length });
        else note(`Removed ${plural(refs.length, 'recipient')} (or they were not subscribed).`);
      }),
    );

  group
    .command('deliveries <deploymentId> <id>')
    .description("A notification's deliveries, newest first, with how many recipients each reached")
    .addHelpText(
      'after',
      "\nExamples:\n  $ mapi notifications deliveries 3 7\n  $ mapi notifications deliveries 3 7 --json   # each recipient's status, attempts and last error\n",
    )
    .action(
      run(async (context, deploymentArg: string, idArg: string) => {
        const rows = await all(context.client().notifications.deliveries(parseId(deploymentArg, 'deploymentId'), parseId(idArg, 'id')));
        if (context.json) writeJson(rows);
        else writeTable(DELIVERY_COLUMNS, rows, 'No deliveries yet.');
      }),
    );

  group
    .command('send-now <deploymentId> <id>')
    .option('--wait', 'follow the deliveries history until the delivery succeeded or failed (exit 1 when it failed)')
    .description('Deliver a notification now, as its schedule would; the schedule does not move')
    .addHelpText(
      'after',
      '\nA send-now asked for while an earlier one is still queued or running answers that delivery; nothing is sent twice.\n\nExamples:\n  $ mapi notifications send-now 3 7\n  $ mapi notifications send-now 3 7 --wait --json\n',
    )
    .action(
      run(async (context, deploymentArg: string, idArg: string, options: { wait?: boolean }) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const id = parseId(idArg, 'id');
        const client = context.client();
        const queued = await client.notifications.sendNow(deploymentId, id);
        if (!options.wait) {
          if (context.json) writeJson(queued);
          else writeTable(DELIVERY_COLUMNS, [queued], '');
          note(`Delivery ${queued.id} is ${queued.status}; follow it with \`mapi notifications deliveries ${deploymentId} ${id}\`.`);
          return EXIT.OK;
        }
        note(`Delivery ${queued.id} is ${queued.status}; waiting until it is done…`);
        const done = await client.notifications.waitForDelivery(deploymentId, id, queued.id);
        if (context.json) writeJson(done);
        else writeTable(DELIVERY_COLUMNS, [done], '');
        if (done.status === 'failed') {
          note(`Delivery ${done.id} failed: ${done.message ?? 'no reason given'}`);
          return EXIT.ERROR;
        }
        return EXIT.OK;
      }),
    );
  coversEach(group, {
    list: ['listNotifications'],
    create: ['createNotification'],
    get: ['getNotification'],
    update: ['updateNotification'],
    delete: ['deleteNotification'],
    recipients: ['listNotificationRecipients'],
    add: ['addNotificationRecipients'],
    remove: ['removeNotificationRecipients'],
    deliveries: ['listNotificationDeliveries'],
    'send-now': ['sendNotificationNow', 'listNotificationDeliveries'],
  });
}
