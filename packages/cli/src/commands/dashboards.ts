import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type {
  DashboardExportFile,
  DashboardExportStatus,
  DashboardFilterInput,
  DashboardTimeGrainInput,
  ExportSubjectInput,
  MapiClient,
  StartDashboardExportInput,
} from '@mapi/client';
import { run } from '../context.js';
import { EXIT, UsageError } from '../errors.js';
import { createExportProgress } from '../export-progress.js';
import { parseId } from '../items.js';
import { formatBytes, note, write, writeJson } from '../output.js';
import { registerPublish } from './dashboard-publish.js';
import { coversEach } from '../operations.js';

const HELP = `
Publishing saves a dashboard file (JSON or YAML) as a workbook's draft and publishes it; the
public id it prints is what embedding names (mapi embed share, mapi embed session).
An export renders a published dashboard to PNG or PDF on the server, with your own row-level
access (or, for an admin, someone else's with --render-as). It needs MANAGE on the dashboard's
workbook. The server keeps an export and its file for 5 minutes, visible to you only.

Examples:
  $ mapi dashboards publish 3 sales --file sales.yaml --name "Sales"
  $ mapi dashboards export 3 12 --out weekly.pdf
  $ mapi dashboards export 3 Xk2f9aQ --format png --out - > weekly.png
  $ mapi dashboards export 3 12 --out weekly.pdf --filter orders.status=completed --render-as user:ann@example.com
  $ mapi dashboards export-status 3 qY3v… --follow
  $ mapi dashboards download 3 qY3v… --out weekly.pdf --force
`;

const EXPORT_HELP = `
<dashboard> is the published dashboard's id, or its public id. The format follows --format, else
the extension of --out (.png or .pdf), else PNG. The render's progress shows on stderr; the file
is written once it is complete, and an existing file is kept unless --force is given. --out -
writes the file to stdout (not to a terminal). --print makes A4 portrait pages split between
widget rows, for printing (PDF only). A failed render exits 1 with its reason.

Examples:
  $ mapi dashboards export 3 12 --out weekly.pdf
  $ mapi dashboards export 3 12 --out weekly.pdf --print
  $ mapi dashboards export 3 12 --format png --out - | convert - -resize 50% small.png
  $ mapi dashboards export 3 12 --out eu.pdf --filter customers.region=EU --time-grain orders.created_at=week
  $ mapi dashboards export 3 12 --no-wait --json
`;

type Format = StartDashboardExportInput['format'];

interface ExportOptions {
  out?: string;
  format?: string;
  force?: boolean;
  filter: string[];
  timeGrain: string[];
  renderAs?: string;
  print?: boolean;
  wait?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** The format asked for: --format, else the extension of --out; a mismatch of the two is a mistake. */
export function exportFormat(format: string | undefined, out: string | undefined): Format {
  const extension = out === undefined || out === '-' ? '' : path.extname(out).slice(1).toLowerCase();
  const fromOut = extension === 'png' || extension === 'pdf' ? extension : undefined;
  if (format === undefined) return fromOut ?? 'png';
  const wanted = format.toLowerCase();
  if (wanted !== 'png' && wanted !== 'pdf') throw new UsageError(`--format must be png or pdf, got "${format}".`);
  if (fromOut !== undefined && fromOut !== wanted)
    throw new UsageError(`--format ${wanted} does not match --out ${out}.`, `Name the file .${wanted}, or leave out --format.`);
  return wanted;
}

/** `member=value` flags; one member given twice matches any of its values. */
export function parseFilters(flags: string[]): DashboardFilterInput[] {
  const byMember = new Map<string, string[]>();
  for (const flag of flags) {
    const at = flag.indexOf('=');
    if (at <= 0) throw new UsageError(`--filter "${flag}" is not member=value.`, 'For example --filter orders.status=completed.');
    const member = flag.slice(0, at);
    byMember.set(member, [...(byMember.get(member) ?? []), flag.slice(at + 1)]);
  }
  return [...byMember].map(([member, values]) => ({ member, operator: 'equals', value: values }));
}

export function parseTimeGrains(flags: string[]): DashboardTimeGrainInput[] {
  return flags.map((flag) => {
    const at = flag.indexOf('=');
    if (at <= 0 || at === flag.length - 1)
      throw new UsageError(`--time-grain "${flag}" is not member=grain.`, 'For example --time-grain orders.created_at=week.');
    return { member: flag.slice(0, at), grain: flag.slice(at + 1) };
  });
}

/** `user:<id>`, `user:<email>` or `embed:<embedTenant>/<externalId>`. */
export function parseRenderAs(text: string): ExportSubjectInput {
  const user = /^user:(.+)$/.exec(text);
  if (user) return /^[1-9][0-9]*$/.test(user[1]!) ? { type: 'USER', userId: Number(user[1]) } : { type: 'USER', email: user[1]! };
  const embed = /^embed:([^/]+)\/(.+)$/.exec(text);
  if (embed) return { type: 'EMBED_USER', embedTenantName: embed[1]!, externalId: embed[2]! };
  throw new UsageError(`--render-as "${text}" names nobody: give user:<id>, user:<email> or embed:<embedTenant>/<externalId>.`);
}

/** The body of a start, from the arguments and flags. */
export function exportInput(dashboard: string, options: ExportOptions): StartDashboardExportInput {
  const input: StartDashboardExportInput = {
    format: exportFormat(options.format, options.out),
    ...(/^[1-9][0-9]*$/.test(dashboard) ? { dashboardId: Number(dashboard) } : { dashboardPublicId: dashboard }),
  };
  if (options.filter.length > 0) input.filters = parseFilters(options.filter);
  if (options.timeGrain.length > 0) input.timeGrains = parseTimeGrains(options.timeGrain);
  if (options.renderAs !== undefined) input.renderAs = parseRenderAs(options.renderAs);
  if (options.print) {
    if (input.format !== 'pdf') throw new UsageError('--print makes A4 pages of a PDF.', 'Add --format pdf, or name --out a .pdf file.');
    input.layout = 'print';
  }
  return input;
}

/**
 * Checks, before anything is rendered, that the file can be written: a render is not wasted on
 * a name that is taken or a directory that does not exist.
 */
function checkOut(out: string | undefined, force: boolean): string {
  if (out === undefined || out.trim() === '') throw new UsageError('--out is required: the file to write, or - for stdout.', 'For example --out weekly.pdf.');
  if (out === '-') {
    if (process.stdout.isTTY)
      throw new UsageError('--out - would print the file to the terminal.', 'Redirect stdout (> weekly.png) or pipe it, or give a file name.');
    return out;
  }
  const dir = path.dirname(path.resolve(out));
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--out ${out}: directory ${dir} does not exist.`);
  if (!force && fs.existsSync(out)) throw new UsageError(`${out} already exists.`, 'Pass --force to replace it, or choose another --out.');
  return out;
}

/** Writes the file (or stdout) and says what was written where stdout allows. */
function save(file: DashboardExportFile, out: string, force: boolean, jobId: string, json: boolean): void {
  if (out === '-') {
    process.stdout.write(file.bytes);
    note(`Wrote ${formatBytes(file.bytes.length)} of ${file.contentType} to stdout.`);
    return;
  }
  try {
    // `wx` fails when the file appeared meanwhile: never replace a file without --force.
    fs.writeFileSync(out, file.bytes, { flag: force ? 'w' : 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new UsageError(`${out} already exists.`, 'Pass --force to replace it, or choose another --out.');
    throw error;
  }
  if (json) writeJson({ jobId, file: out, bytes: file.bytes.length, contentType: file.contentType });
  else write(`Wrote ${out} (${formatBytes(file.bytes.length)}, ${file.contentType}).`);
}

/** Follows an export to its end with a progress display on stderr. */
async function follow(client: MapiClient, deploymentId: number, jobId: string): Promise<DashboardExportStatus> {
  const progress = createExportProgress();
  try {
    return await client.dashboardExports.waitFor(deploymentId, jobId, { onUpdate: (s) => progress.update(s) });
  } finally {
    progress.stop();
  }
}

function failed(jobId: string, status: DashboardExportStatus): number {
  note(`Export ${jobId} failed: ${status.error ?? 'no reason given'}`);
  return EXIT.ERROR;
}

export function registerDashboards(program: Command): void {
  const dashboards = program.command('dashboards').description('Published dashboards: publish from a file, export to PNG or PDF').addHelpText('after', HELP);
  registerPublish(dashboards);

  dashboards
    .command('export')
    .argument('<deploymentId>', 'deployment id')
    .argument('<dashboard>', "the published dashboard's id, or its public id")
    .option('-o, --out <file>', 'the file to write, or - for stdout')
    .option('--format <format>', 'png or pdf (default: from the extension of --out, else png)')
    .option('--force', 'replace --out if it exists')
    .option('--print', 'A4 portrait pages split between widget rows, instead of one page of the dashboard’s size (PDF only)')
    .option('--filter <member=value>', 'a filter applied to the render (repeatable; one member given twice matches either value)', collect, [])
    .option('--time-grain <member=grain>', 'a time grain, e.g. orders.created_at=week (repeatable)', collect, [])
    .option('--render-as <subject>', "render with someone else's rows (admin): user:<id>, user:<email> or embed:<embedTenant>/<externalId>")
    .option('--no-wait', 'print the job id and return at once; `mapi dashboards download` fetches the file')
    .description('Render a published dashboard to PNG or PDF and write the file')
    .addHelpText('after', EXPORT_HELP)
    .action(
      run(async (context, deploymentArg: string, dashboard: string, options: ExportOptions) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const force = options.force === true;
        const out = options.wait === false ? undefined : checkOut(options.out, force);
        if (out === '-' && context.json)
          throw new UsageError('--json and --out - both write to stdout.', 'Leave out --json, or write the file with --out FILE.');
        const input = exportInput(dashboard, options);
        const client = context.client();
        const started = await client.dashboardExports.start(deploymentId, input);
        if (out === undefined) {
          if (context.json) writeJson(started);
          else write(started.jobId);
          note(`Export ${started.jobId} started; it is kept until ${started.expiresAt}.`);
          return EXIT.OK;
        }
        note(`Export ${started.jobId} started (${input.format}).`);
        const status = await follow(client, deploymentId, started.jobId);
        if (status.status === 'failed') return failed(started.jobId, status);
        save(await client.dashboardExports.download(deploymentId, started.jobId), out, force, started.jobId, context.json);
        return EXIT.OK;
      }),
    );

  dashboards
    .command('export-status')
    .argument('<deploymentId>', 'deployment id')
    .argument('<jobId>', 'the job id export --no-wait printed')
    .option('--follow', 'wait until the export is completed or failed (exit 1 when it failed)')
    .description("An export's status: pending, processing, completed or failed")
    .addHelpText(
      'after',
      '\nOnly the user who started an export sees it, for 5 minutes.\n\nExamples:\n  $ mapi dashboards export-status 3 qY3v…\n  $ mapi dashboards export-status 3 qY3v… --follow --json\n',
    )
    .action(
      run(async (context, deploymentArg: string, jobId: string, options: { follow?: boolean }) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const client = context.client();
        const status = options.follow ? await follow(client, deploymentId, jobId) : await client.dashboardExports.status(deploymentId, jobId);
        if (context.json) writeJson(status);
        else
          write(
            `${status.status}${status.progress == null ? '' : ` ${status.progress}%`}${status.contentType ? ` ${status.contentType}` : ''}${status.error ? `: ${status.error}` : ''}`,
          );
        return options.follow && status.status === 'failed' ? EXIT.ERROR : EXIT.OK;
      }),
    );

  dashboards
    .command('download')
    .argument('<deploymentId>', 'deployment id')
    .argument('<jobId>', 'the job id export --no-wait printed')
    .option('-o, --out <file>', 'the file to write, or - for stdout')
    .option('--force', 'replace --out if it exists')
    .option('--wait', 'wait for the render first, when it is still running')
    .description("Write a completed export's file")
    .addHelpText(
      'after',
      '\nWithout --wait, an export still rendering is an error (409) that says so.\n\nExamples:\n  $ mapi dashboards download 3 qY3v… --out weekly.pdf\n  $ mapi dashboards download 3 qY3v… --wait --out - > weekly.png\n',
    )
    .action(
      run(async (context, deploymentArg: string, jobId: string, options: { out?: string; force?: boolean; wait?: boolean }) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const force = options.force === true;
        const out = checkOut(options.out, force);
        if (out === '-' && context.json)
          throw new UsageError('--json and --out - both write to stdout.', 'Leave out --json, or write the file with --out FILE.');
        const client = context.client();
        if (options.wait) {
          const status = await follow(client, deploymentId, jobId);
          if (status.status === 'failed') return failed(jobId, status);
        }
        save(await client.dashboardExports.download(deploymentId, jobId), out, force, jobId, context.json);
        return EXIT.OK;
      }),
    );
  coversEach(dashboards, {
    publish: ['upsertWorkbookBySlug', 'saveDashboardDraft', 'publishDashboard'],
    export: ['startDashboardExport', 'getDashboardExport', 'downloadDashboardExport'],
    'export-status': ['getDashboardExport'],
    download: ['getDashboardExport', 'downloadDashboardExport'],
  });
}
