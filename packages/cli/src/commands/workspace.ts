import type { Command } from 'commander';
import type { WorkspaceEntry } from '@mapi/client';
import { run } from '../context.js';
import { UsageError } from '../errors.js';
import { parseFolder, parseId } from '../items.js';
import { all, shortDate, write, writeJson, writeTable, type Column } from '../output.js';
import { coversEach } from '../operations.js';

const ref = (e: WorkspaceEntry) => `${e.type.toLowerCase()}:${e.id}`;

const COLUMNS: Column<WorkspaceEntry>[] = [
  // TYPE:ID first: it is what `mapi move` and `mapi delete` take.
  { header: 'ITEM', value: ref },
  { header: 'NAME', value: (e) => e.name },
  { header: 'UPDATED', value: (e) => shortDate(e.updatedAt) },
];

// A search covers the whole workspace, so each hit needs its location.
const SEARCH_COLUMNS: Column<WorkspaceEntry>[] = [
  ...COLUMNS,
  { header: 'FOLDER', value: (e) => (e.folderPath.length === 0 ? '/' : `/${e.folderPath.map((p) => p.name).join('/')}`) },
];

export function registerWorkspace(program: Command): void {
  const workspace = program.command('workspace').description('Workspace items (folders, workbooks, reports) of a deployment');
  workspace.addHelpText('after', '\nExample:\n  $ mapi workspace ls 1 12\n');

  workspace
    .command('ls')
    .alias('list')
    .argument('<deploymentId>', 'deployment id')
    .argument('[folder]', 'folder id, or "root" (the default)', 'root')
    .option('--search <text>', 'case-insensitive name search across the whole workspace (ignores [folder])')
    .option('--refs', 'print only TYPE:ID, one per line, for piping into `mapi move ... -` or `mapi delete ... -`')
    .description('List one folder of the workspace (folders first, then workbooks and reports)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi workspace ls 1\n  $ mapi workspace ls 1 12\n  $ mapi workspace ls 1 --search budget\n  $ mapi workspace ls 1 12 --refs | mapi move 1 --to 40 -\n',
    )
    .action(
      run(async (context, deployment: string, folder: string, options: { search?: string; refs?: boolean }) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const folderId = parseFolder(folder);
        // An empty --search would list the root, which is not what was asked for.
        if (options.search !== undefined && options.search.trim() === '')
          throw new UsageError('--search is empty.', `Give the text to look for, e.g. \`mapi workspace ls ${deploymentId} --search budget\`.`);
        const query = options.search ? { search: options.search } : { folderId: folderId ?? ('root' as const) };
        const entries = await all(context.client().workspace.list(deploymentId, query));
        if (context.json) writeJson(entries);
        else if (options.refs) {
          if (entries.length > 0) write(entries.map(ref).join('\n'));
        } else {
          const where = options.search ? `matching "${options.search}"` : folderId === null ? 'at the workspace root' : `in folder ${folderId}`;
          writeTable(options.search ? SEARCH_COLUMNS : COLUMNS, entries, `No items ${where}.`);
        }
      }),
    );

  workspace
    .command('shared')
    .argument('<deploymentId>', 'deployment id')
    .argument('[folder]', 'folder id, or "root" (the default)', 'root')
    .option('--search <text>', 'case-insensitive name search across the whole shared workspace (ignores [folder])')
    .option('--types <types>', 'comma-separated item types to list: FOLDER, WORKBOOK, REPORT (all by default)')
    .option('--copy <workbookId>', 'instead of listing, copy this shared workbook to the root (built from its published dashboard)')
    .description('The shared workspace of a creator-mode embed session (MAPI_TOKEN set to its embed token): list it, or copy from it')
    .addHelpText(
      'after',
      "\nThe token must be a creator-mode embed session's (an API key is refused with 403).\n\nExamples:\n  $ MAPI_TOKEN=$EMBED_TOKEN mapi workspace shared 1\n  $ MAPI_TOKEN=$EMBED_TOKEN mapi workspace shared 1 12 --types WORKBOOK\n  $ MAPI_TOKEN=$EMBED_TOKEN mapi workspace shared 1 --copy 34\n",
    )
    .action(
      run(async (context, deployment: string, folder: string, options: { search?: string; types?: string; copy?: string }) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const folderId = parseFolder(folder);
        const client = context.client();
        if (options.copy !== undefined) {
          const copy = await client.sharedWorkspace.copy(deploymentId, parseId(options.copy, 'workbookId'));
          if (context.json) writeJson(copy);
          else write(`Copied workbook ${options.copy} to "${copy.name}" (workbook:${copy.id}) at the workspace root of deployment ${deploymentId}.`);
          return;
        }
        if (options.search !== undefined && options.search.trim() === '')
          throw new UsageError('--search is empty.', `Give the text to look for, e.g. \`mapi workspace shared ${deploymentId} --search budget\`.`);
        const types = options.types?.split(',').map((t) => t.trim().toUpperCase());
        if (types && types.some((t) => !['FOLDER', 'WORKBOOK', 'REPORT'].includes(t)))
          throw new UsageError(
            `--types ${options.types} is not a list of item types.`,
            'Give FOLDER, WORKBOOK or REPORT, comma-separated, e.g. --types WORKBOOK,REPORT.',
          );
        const query = {
          ...(options.search ? { search: options.search } : { folderId: folderId === null ? 'root' : String(folderId) }),
          ...(types ? { types: [types.join(',')] } : {}),
        };
        const entries = await all(client.sharedWorkspace.list(deploymentId, query));
        if (context.json) writeJson(entries);
        else {
          const where = options.search ? `matching "${options.search}"` : folderId === null ? 'at the root' : `in folder ${folderId}`;
          writeTable(options.search ? SEARCH_COLUMNS : COLUMNS, entries, `Nothing shared ${where}.`);
        }
      }),
    );
  coversEach(workspace, { ls: ['listWorkspace'], shared: ['listSharedWorkspace', 'duplicateWorkbook'] });
}
