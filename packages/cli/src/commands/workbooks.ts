import type { Command } from 'commander';
import { unwrap } from '@mapi/client';
import { run } from '../context.js';
import { registerTextFileCommands } from './text-file.js';
import { parseFolder, parseId, parseSlug } from '../items.js';
import { write, writeJson } from '../output.js';

const HELP = `
The slug is the workbook's stable name in URLs: the first put creates the workbook, later puts
with the same slug update it (its name always; its folder only when --folder is given). A
different --folder moves it, with the same checks and errors as \`mapi move\`.

Examples:
  $ mapi workbooks put 1 q3-revenue --name "Q3 revenue"
  $ mapi workbooks put 1 q3-revenue --name "Q3 revenue" --folder 12
  $ mapi workbooks put 1 q3-revenue --name "Q3 revenue" --folder root --json
`;

export function registerWorkbooks(program: Command): void {
  const workbooks = program.command('workbooks').description('Workbooks of a deployment: create or update by slug, duplicate, their dashboard draft as text');
  workbooks.addHelpText('after', '\nExample:\n  $ mapi workbooks put 1 q3-revenue --name "Q3 revenue" --folder 12\n');

  registerTextFileCommands(
    workbooks,
    'draft-file',
    {
      idName: 'workbook',
      what: 'workbook’s dashboard draft',
      label: (id) => `the dashboard draft of workbook ${id}`,
      files: (client) => client.dashboardFiles,
    },
    '  $ mapi workbooks draft-file 1 7 > draft.json\n  $ mapi workbooks draft-file-edit 1 7 --old \'"title": "Q3"\' --new \'"title": "Q4"\'\n  $ mapi workbooks draft-file-edit 1 7 --from draft.json --hash 5f1c…\n',
  );

  workbooks
    .command('put')
    .argument('<deploymentId>', 'deployment id')
    .argument('<slug>', 'the workbook slug')
    .requiredOption('--name <name>', 'workbook name (the API sets the name on every put)')
    .option('--folder <folder>', 'containing folder id, or "root"; left out: the root for a new workbook, unchanged otherwise')
    .description('Create a workbook with this slug, or update the one that has it')
    .addHelpText('after', HELP)
    .action(
      run(async (context, deployment: string, slugArg: string, options: { name: string; folder?: string }) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const slug = parseSlug(slugArg);
        const body = {
          name: options.name,
          ...(options.folder === undefined ? {} : { folderId: parseFolder(options.folder, '--folder') }),
        };
        const answer = await context.client().PUT('/api/v1/deployments/{deploymentId}/workbooks/by-slug/{slug}', {
          params: { path: { deploymentId, slug } },
          body,
        });
        const workbook = unwrap(answer);
        if (context.json) {
          writeJson(workbook);
          return;
        }
        write(
          `${answer.response.status === 201 ? 'Created' : 'Updated'} workbook "${workbook.name}" (workbook:${workbook.id}, slug ${slug}) in ${placeOf(workbook.folderPath)}.`,
        );
      }),
    );

  workbooks
    .command('duplicate')
    .argument('<deploymentId>', 'deployment id')
    .argument('<workbookId>', 'the workbook to copy')
    .option('--folder <folder>', 'where the copy goes (EDIT needed there): a folder id or "root"; left out: beside the source, or the root')
    .option('--name <name>', 'the copy\'s name; "Copy of <name>" by default')
    .description('Copy a workbook with its reports and its published dashboard (embedding off, sharing not copied)')
    .addHelpText('after', DUPLICATE_HELP)
    .action(
      run(async (context, deployment: string, workbook: string, options: { folder?: string; name?: string }) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const workbookId = parseId(workbook, 'workbookId');
        const body = {
          ...(options.folder === undefined ? {} : { folderId: parseFolder(options.folder, '--folder') }),
          ...(options.name === undefined ? {} : { name: options.name }),
        };
        const copy = unwrap(
          await context
            .client()
            .POST('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/duplicate', { params: { path: { deploymentId, workbookId } }, body }),
        );
        if (context.json) {
          writeJson(copy);
          return;
        }
        write(`Copied workbook:${workbookId} to "${copy.name}" (workbook:${copy.id}, slug ${copy.slug}) in ${placeOf(copy.folderPath)}.`);
      }),
    );
}

const DUPLICATE_HELP = `
Without --folder the copy goes beside the source when you have EDIT on its folder, otherwise to
the workspace root, which needs EDIT on the deployment; with neither the server answers 403 and
nothing is created: pass --folder with a folder where you have EDIT.

Examples:
  $ mapi workbooks duplicate 1 42
  $ mapi workbooks duplicate 1 42 --folder 12 --name "Q3 revenue (draft)" --json
`;

/** "the workspace root" or the folder path, as the server gives it. */
function placeOf(folderPath: { name: string }[] | null | undefined): string {
  const path = folderPath ?? [];
  return path.length === 0 ? 'the workspace root' : path.map((f) => f.name).join(' / ');
}
