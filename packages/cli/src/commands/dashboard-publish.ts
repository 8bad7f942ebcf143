import type { Command } from 'commander';
import type { DashboardConfigDraftInput, WorkbookBySlug } from '@mapi/client';
import { run } from '../context.js';
import { UsageError } from '../errors.js';
import { readFields } from '../input-file.js';
import { parseFolder, parseId, parseSlug } from '../items.js';
import { plural, write, writeJson } from '../output.js';

const PUBLISH_HELP = `
The file holds the dashboard draft, in JSON or YAML: the document \`mapi workbooks draft-file\`
prints (title, layout, widgets; widgets without an id get one). It is saved as the workbook's
draft, then published as the next version of its dashboard; the public id stays the same from
one version to the next. A refused publication leaves the file saved as the draft.

<workbook> is a workbook id, or a slug: a slug creates the workbook, or updates the one that has
it, first, named --name (else the dashboard's title; the name is set on every put) and placed
in --folder (a new one at the root when left out).

Examples:
  $ mapi dashboards publish 3 12 --file sales.yaml
  $ mapi dashboards publish 3 sales --file sales.json --name "Sales" --folder 4
  $ cat sales.yaml | mapi dashboards publish 3 sales --file - --allow-embed --json
`;

interface PublishOptions {
  file?: string;
  name?: string;
  folder?: string;
  title?: string;
  description?: string;
  allowEmbed?: boolean;
}

/** The workbook argument: an id, or a slug with the name and folder to put it with. */
export function workbookTarget(arg: string, draft: Record<string, unknown>, options: PublishOptions): number | WorkbookBySlug {
  if (/^[0-9]+$/.test(arg.trim())) {
    if (options.name !== undefined || options.folder !== undefined)
      throw new UsageError('--name and --folder apply to a workbook given by slug.', 'Give the slug instead of the id, or leave them out.');
    return parseId(arg, 'workbook id');
  }
  const slug = parseSlug(arg);
  const name = options.name ?? (typeof draft.title === 'string' && draft.title.trim() !== '' ? draft.title : undefined);
  if (name === undefined) throw new UsageError(`A workbook given by slug needs a name: the file's dashboard has no title.`, 'Add --name "Sales".');
  return { slug, name, ...(options.folder === undefined ? {} : { folderId: parseFolder(options.folder, '--folder') }) };
}

export function registerPublish(dashboards: Command): void {
  dashboards
    .command('publish')
    .argument('<deploymentId>', 'deployment id')
    .argument('<workbook>', 'workbook id, or slug (created or updated first)')
    .option('-f, --file <file>', 'the dashboard draft, JSON or YAML; - for stdin')
    .option('--name <name>', "the workbook's name, for a slug (default: the dashboard's title)")
    .option('--folder <folder>', 'the folder of a workbook given by slug: a folder id or "root"')
    .option('--title <title>', "the publication's title (default: the dashboard's)")
    .option('--description <text>', "the publication's description (default: the dashboard's)")
    .option('--allow-embed', 'turn signed embedding on with the publication')
    .option('--no-allow-embed', 'turn signed embedding off with the publication')
    .description("Publish a dashboard from a file: save it as the workbook's draft, then publish it")
    .addHelpText('after', PUBLISH_HELP)
    .action(
      run(async (context, deploymentArg: string, workbookArg: string, options: PublishOptions) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        if (options.file === undefined) throw new UsageError('--file is required: the dashboard draft, or - for stdin.', 'For example --file sales.yaml.');
        const draft = readFields(options.file);
        const workbook = workbookTarget(workbookArg, draft, options);
        const result = await context.client().workbooks.publishFromFile(deploymentId, workbook, draft as DashboardConfigDraftInput, {
          ...(options.title === undefined ? {} : { title: options.title }),
          ...(options.description === undefined ? {} : { description: options.description }),
          ...(options.allowEmbed === undefined ? {} : { allowEmbed: options.allowEmbed }),
        });
        if (context.json) {
          writeJson(result);
          return;
        }
        const { dashboard } = result;
        const made = typeof workbook === 'number' ? '' : ` (${result.created ? 'created' : 'updated'} with slug ${workbook.slug})`;
        write(
          `Published version ${dashboard.versionNumber} of the dashboard of workbook:${result.workbookId}${made}: public id ${dashboard.publicId}, ` +
            `${plural(dashboard.config.widgets?.length ?? 0, 'widget')}, signed embedding ${dashboard.allowEmbed ? 'on' : 'off'}.`,
        );
      }),
    );
}
