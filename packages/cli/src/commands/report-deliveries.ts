import type { Command } from 'commander';
import type { CreateReportDeliveryInput, ReportDelivery, ReportDeliveryFormat, ReportDeliveryRun, UpdateReportDeliveryInput } from '@mapi/client';
import { run } from '../context.js';
import { UsageError } from '../errors.js';
import { parseId } from '../items.js';
import { all, note, shortDate, writeJson, writeTable, type Column } from '../output.js';
import { coversEach } from '../operations.js';

type RecipientInput = CreateReportDeliveryInput['recipients'][number];

const HELP = `
A report delivery mails a report's rows as CSV or XLSX (--format) on a schedule (admin only). Each
recipient gets the rows they may see (their row-level security), at most 10,000 rows; at most 50
recipients. --cron is five fields and may fire at most hourly; --timezone an IANA zone (default UTC).
Recipients are user:<id>, user:<email>, or embed:<embedTenant>/<externalId> (an existing embed user with an address or an email-shaped external id).

Examples:
  $ mapi report-deliveries create 3 --report 12 --cron "0 9 * * 1" --to user:ann@example.com user:14
  $ mapi report-deliveries create 3 --report 12 --cron "0 9 * * 1" --format xlsx --to user:14
  $ mapi report-deliveries list 3
  $ mapi report-deliveries pause 3 7
  $ mapi report-deliveries run 3 7
  $ mapi report-deliveries runs 3 7
`;

const COLUMNS: Column<ReportDelivery>[] = [
  { header: 'ID', value: (d) => d.id, align: 'right' },
  { header: 'REPORT', value: (d) => d.reportId, align: 'right' },
  { header: 'NAME', value: (d) => d.name },
  { header: 'FORMAT', value: (d) => d.format },
  { header: 'CRON', value: (d) => `${d.cron} (${d.timezone})` },
  { header: 'PAUSED', value: (d) => (d.paused ? 'yes' : 'no') },
  { header: 'NEXT RUN (UTC)', value: (d) => shortDate(d.nextRunAt) },
  { header: 'RECIPIENTS', value: (d) => d.recipients.length, align: 'right' },
];

const RUN_COLUMNS: Column<ReportDeliveryRun>[] = [
  { header: 'ID', value: (r) => r.id, align: 'right' },
  { header: 'TRIGGER', value: (r) => r.trigger },
  { header: 'CREATED (UTC)', value: (r) => shortDate(r.createdAt) },
  { header: 'STATUS', value: (r) => r.status },
  { header: 'SENT', value: (r) => `${r.recipients.filter((x) => x.status === 'sent').length}/${r.recipients.length}` },
  { header: 'MESSAGE', value: (r) => r.message },
];

/** `user:<id>`, `user:<email>`, `embed:<tenant>/<externalId>`. */
export function parseDeliveryRecipient(text: string): RecipientInput {
  const [kind, ...rest] = text.split(':');
  const value = rest.join(':');
  if (kind === 'user' && value !== '') return /^[1-9][0-9]*$/.test(value) ? { type: 'USER', userId: Number(value) } : { type: 'USER', email: value };
  if (kind === 'embed') {
    const slash = value.indexOf('/');
    if (slash > 0 && slash < value.length - 1) return { type: 'EMBED_USER', embedTenantName: value.slice(0, slash), externalId: value.slice(slash + 1) };
  }
  throw new UsageError(`"${text}" is not a recipient: give user:<id>, user:<email> or embed:<embedTenant>/<externalId>.`);
}

const FORMATS: readonly ReportDeliveryFormat[] = ['csv', 'xlsx'];

/** `csv` or `xlsx`, in any case. */
export function parseDeliveryFormat(text: string): ReportDeliveryFormat {
  const format = FORMATS.find((f) => f === text.toLowerCase());
  if (format === undefined) throw new UsageError(`"${text}" is not a format: give csv or xlsx.`);
  return format;
}

interface Flags {
  name?: string;
  cron?: string;
  timezone?: string;
  format?: string;
  to?: string[];
}

function fields(options: Flags): UpdateReportDeliveryInput {
  const input: UpdateReportDeliveryInput = {};
  if (options.name !== undefined) input.name = options.name;
  if (options.cron !== undefined) input.cron = options.cron;
  if (options.timezone !== undefined) input.timezone = options.timezone;
  if (options.format !== undefined) input.format = parseDeliveryFormat(options.format);
  if (options.to !== undefined) input.recipients = options.to.map(parseDeliveryRecipient);
  return input;
}

function show(context: { json: boolean }, delivery: ReportDelivery, what: string): void {
  if (context.json) writeJson(delivery);
  else {
    note(`${what} report delivery ${delivery.id}: ${delivery.cron} (${delivery.timezone})${delivery.paused ? ', paused' : ''}.`);
    writeTable(COLUMNS, [delivery], '');
  }
}

export function registerReportDeliveries(program: Command): void {
  const group = program.command('report-deliveries').description("Scheduled mailings of a report's rows as CSV or XLSX, and their runs (admin)");
  group.addHelpText('after', HELP);
  const ids = (deploymentArg: string, idArg: string) => [parseId(deploymentArg, 'deploymentId'), parseId(idArg, 'id')] as const;

  group
    .command('list <deploymentId>')
    .alias('ls')
    .option('--report <id>', "only this report's deliveries")
    .description("List a deployment's report deliveries, newest first")
    .addHelpText('after', '\nExamples:\n  $ mapi report-deliveries list 3\n  $ mapi report-deliveries list 3 --report 12 --json\n')
    .action(
      run(async (context, deploymentArg: string, options: { report?: string }) => {
        const query = options.report ? { reportId: parseId(options.report, '--report') } : {};
        const rows = await all(context.client().reportDeliveries.list(parseId(deploymentArg, 'deploymentId'), query));
        if (context.json) writeJson(rows);
        else writeTable(COLUMNS, rows, 'No report deliveries.');
      }),
    );

  group
    .command('create <deploymentId>')
    .requiredOption('--report <id>', 'the report whose rows are mailed')
    .requiredOption('--cron <expression>', 'five fields, at most hourly')
    .requiredOption('--to <recipients...>', 'user:<id>, user:<email> or embed:<embedTenant>/<externalId>')
    .option('--name <name>', "mail subject and file name (default: the report's title)")
    .option('--timezone <zone>', 'IANA time zone, e.g. Europe/Berlin')
    .option('--format <format>', 'the attachment: csv (default) or xlsx')
    .option('--paused', 'create it paused')
    .description("Schedule mailings of a report's rows as CSV or XLSX")
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi report-deliveries create 3 --report 12 --cron "0 9 * * 1" --timezone Europe/Berlin --to user:ann@example.com user:14\n  $ mapi report-deliveries create 3 --report 12 --cron "30 6 * * *" --to embed:acme/bo@acme.example --paused\n',
    )
    .action(
      run(async (context, deploymentArg: string, options: Flags & { report: string; cron: string; paused?: boolean }) => {
        const input = {
          ...fields(options),
          reportId: parseId(options.report, '--report'),
          ...(options.paused ? { paused: true } : {}),
        } as CreateReportDeliveryInput;
        show(context, await context.client().reportDeliveries.create(parseId(deploymentArg, 'deploymentId'), input), 'Created');
      }),
    );

  group
    .command('get <deploymentId> <id>')
    .description('Show a report delivery')
    .addHelpText('after', '\nExamples:\n  $ mapi report-deliveries get 3 7 --json\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string) => {
        const delivery = await context.client().reportDeliveries.get(...ids(deploymentArg, idArg));
        if (context.json) writeJson(delivery);
        else writeTable(COLUMNS, [delivery], '');
      }),
    );

  group
    .command('update <deploymentId> <id>')
    .option('--name <name>', 'mail subject and file name')
    .option('--cron <expression>', 'five fields, at most hourly')
    .option('--timezone <zone>', 'IANA time zone')
    .option('--format <format>', 'the attachment: csv or xlsx')
    .option('--to <recipients...>', 'replace the recipients')
    .description('Change a report delivery: only the flags given change')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi report-deliveries update 3 7 --cron "0 8 * * 1-5"\n  $ mapi report-deliveries update 3 7 --format xlsx\n  $ mapi report-deliveries update 3 7 --to user:ann@example.com user:bo@example.com\n',
    )
    .action(
      run(async (context, deploymentArg: string, idArg: string, options: Flags) => {
        const input = fields(options);
        if (Object.keys(input).length === 0) throw new UsageError('Nothing to change: give --name, --cron, --timezone, --format or --to.');
        show(context, await context.client().reportDeliveries.update(...ids(deploymentArg, idArg), input), 'Updated');
      }),
    );

  group
    .command('delete <deploymentId> <id>')
    .alias('rm')
    .description('Delete a report delivery with its run history')
    .addHelpText('after', '\nExamples:\n  $ mapi report-deliveries delete 3 7\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string) => {
        const [deploymentId, id] = ids(deploymentArg, idArg);
        await context.client().reportDeliveries.delete(deploymentId, id);
        if (context.json) writeJson({ deleted: id });
        else note(`Deleted report delivery ${id}.`);
      }),
    );

  for (const [verb, description] of [
    ['pause', 'Pause a report delivery (idempotent)'],
    ['resume', 'Resume a paused report delivery (idempotent; runs from now)'],
  ] as const)
    group
      .command(`${verb} <deploymentId> <id>`)
      .description(description)
      .addHelpText('after', `\nExamples:\n  $ mapi report-deliveries ${verb} 3 7\n`)
      .action(
        run(async (context, deploymentArg: string, idArg: string) => {
          show(context, await context.client().reportDeliveries[verb](...ids(deploymentArg, idArg)), verb === 'pause' ? 'Paused' : 'Resumed');
        }),
      );

  group
    .command('run <deploymentId> <id>')
    .description('Run a report delivery now: answers the queued run and its job')
    .addHelpText('after', '\nExamples:\n  $ mapi report-deliveries run 3 7\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string) => {
        const queued = await context.client().reportDeliveries.run(...ids(deploymentArg, idArg));
        if (context.json) writeJson(queued);
        else note(`Run ${queued.id} queued (job ${queued.jobId}).`);
      }),
    );

  group
    .command('runs <deploymentId> <id>')
    .description("A report delivery's runs, newest first, with how many recipients each reached")
    .addHelpText(
      'after',
      "\nExamples:\n  $ mapi report-deliveries runs 3 7\n  $ mapi report-deliveries runs 3 7 --json   # each recipient's status, rows and error\n",
    )
    .action(
      run(async (context, deploymentArg: string, idArg: string) => {
        const rows = await all(context.client().reportDeliveries.runs(...ids(deploymentArg, idArg)));
        if (context.json) writeJson(rows);
        else writeTable(RUN_COLUMNS, rows, 'No runs yet.');
      }),
    );
  coversEach(group, {
    list: ['listReportDeliveries'],
    create: ['createReportDelivery'],
    get: ['getReportDelivery'],
    update: ['updateReportDelivery'],
    delete: ['deleteReportDelivery'],
    pause: ['pauseReportDelivery'],
    resume: ['resumeReportDelivery'],
    run: ['runReportDelivery'],
    runs: ['listReportDeliveryRuns'],
  });
}
