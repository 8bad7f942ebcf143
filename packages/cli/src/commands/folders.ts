import type { Command } from 'commander';
import { unwrap, type Folder, type MapiClient, type WorkspaceEntry } from '@mapi/client';
import { run } from '../context.js';
import { UsageError } from '../errors.js';
import { parseFolder, parseId } from '../items.js';
import { all, write, writeJson } from '../output.js';
import { coversEach } from '../operations.js';

/** A folder in the tree, as `--json` prints it. */
interface TreeNode {
  type: 'FOLDER';
  id: number;
  name: string;
  children: TreeNode[];
  /** Workbooks and reports directly in this folder (with --items). */
  items?: { type: WorkspaceEntry['type']; id: number; name: string }[];
}

const byName = <T extends { name: string; id: number }>(a: T, b: T) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }) || a.id - b.id;

/**
 * Builds the tree from the flat folder list. A folder whose parent the caller cannot see is shown
 * at the top, so nothing visible is left out.
 */
export function buildTree(folders: Folder[]): TreeNode[] {
  const nodes = new Map<number, TreeNode>(folders.map((f) => [f.id, { type: 'FOLDER', id: f.id, name: f.name, children: [] }]));
  const roots: TreeNode[] = [];
  for (const folder of folders) {
    const node = nodes.get(folder.id) as TreeNode;
    const parent = folder.parentId === null ? undefined : nodes.get(folder.parentId);
    (parent ? parent.children : roots).push(node);
  }
  const sort = (list: TreeNode[]) => {
    list.sort(byName);
    for (const node of list) sort(node.children);
  };
  sort(roots);
  return roots;
}

/** Box-drawing lines, each entry followed by its TYPE:ID so it can be pasted into `mapi move`. */
export function renderTree(title: string, roots: TreeNode[], rootItems: TreeNode['items'] = []): string {
  const lines = [title];
  const walk = (children: TreeNode[], items: NonNullable<TreeNode['items']>, prefix: string) => {
    const entries: { label: string; node?: TreeNode }[] = [
      ...children.map((node) => ({ label: `${node.name}  folder:${node.id}`, node })),
      ...items.map((item) => ({ label: `${item.name}  ${item.type.toLowerCase()}:${item.id}` })),
    ];
    entries.forEach((entry, index) => {
      const last = index === entries.length - 1;
      lines.push(`${prefix}${last ? '└── ' : '├── '}${entry.label}`);
      if (entry.node) walk(entry.node.children, entry.node.items ?? [], `${prefix}${last ? '    ' : '│   '}`);
    });
  };
  walk(roots, rootItems ?? [], '');
  return `${lines.join('\n')}\n`;
}

/**
 * The path of `path`'s last folder, one folder a line, indented as the tree is. A folder above it
 * the caller may not view is missing from `path` but named in its `folderPath`: shown, marked.
 */
export function renderPath(deploymentId: number, path: Folder[]): string {
  const last = path.at(-1);
  if (last === undefined) return `deployment ${deploymentId} (workspace root)\n`;
  const viewable = new Set(path.map((f) => f.id));
  const entries = [...last.folderPath, { id: last.id, name: last.name }];
  const lines = entries.map((entry, depth) => `${'    '.repeat(depth)}└── ${entry.name}  folder:${entry.id}${viewable.has(entry.id) ? '' : '  (no access)'}`);
  return `${[`deployment ${deploymentId} (workspace root)`, ...lines].join('\n')}\n`;
}

/** Workbooks and reports of one folder (or the root): one listing per folder, so only with --items. */
async function itemsIn(client: MapiClient, deploymentId: number, folderId: number | 'root'): Promise<NonNullable<TreeNode['items']>> {
  const entries = await all(client.workspace.list(deploymentId, { folderId }));
  return entries
    .filter((e) => e.type !== 'FOLDER')
    .map((e) => ({ type: e.type, id: e.id, name: e.name }))
    .sort(byName);
}

export function registerFolders(program: Command): void {
  const folders = program.command('folders').description('Folders of a deployment: show the tree, one folder’s path, create');
  folders.addHelpText('after', '\nExamples:\n  $ mapi folders tree 1\n  $ mapi folders path 1 13\n  $ mapi folders create 1 "Finance" --parent 12\n');

  folders
    .command('tree')
    .argument('<deploymentId>', 'deployment id')
    .description('Show the folders of a deployment as an indented tree, with their ids')
    .option('--items', 'also show the workbooks and reports in each folder (one request per folder)')
    .addHelpText('after', '\nExamples:\n  $ mapi folders tree 1\n  $ mapi folders tree 1 --items\n  $ mapi folders tree 1 --json\n')
    .action(
      run(async (context, deployment: string, options: { items?: boolean }) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const client = context.client();
        const roots = buildTree(await all(client.folders.list(deploymentId)));
        let rootItems: TreeNode['items'];
        if (options.items) {
          rootItems = await itemsIn(client, deploymentId, 'root');
          const fill = async (nodes: TreeNode[]): Promise<void> => {
            for (const node of nodes) {
              node.items = await itemsIn(client, deploymentId, node.id);
              await fill(node.children);
            }
          };
          await fill(roots);
        }
        if (context.json) {
          writeJson(options.items ? { folders: roots, items: rootItems } : roots);
          return;
        }
        if (roots.length === 0 && (rootItems ?? []).length === 0)
          write(`Deployment ${deploymentId} has no folders${options.items ? ' or items' : ''} you can see.`);
        else write(renderTree(`deployment ${deploymentId} (workspace root)`, roots, rootItems));
      }),
    );

  folders
    .command('path')
    .argument('<deploymentId>', 'deployment id')
    .argument('<folderId>', 'folder id (`13` or `folder:13`)')
    .description('Show the folders from the workspace root down to a folder, with their ids')
    .addHelpText('after', '\nExamples:\n  $ mapi folders path 1 13\n  $ mapi folders path 1 folder:13 --json\n')
    .action(
      run(async (context, deployment: string, folder: string) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const folderId = parseFolder(folder, '<folderId>');
        if (folderId === null) throw new UsageError('<folderId> must be a folder id; the workspace root has no path.');
        const path = await context.client().folders.ancestors(deploymentId, folderId);
        if (context.json) {
          writeJson(path);
          return;
        }
        write(renderPath(deploymentId, path));
      }),
    );

  folders
    .command('create')
    .argument('<deploymentId>', 'deployment id')
    .argument('<name>', 'folder name (unique within its parent)')
    .option('--parent <folderId>', 'parent folder id; the workspace root when left out')
    .description('Create a folder')
    .addHelpText('after', '\nExamples:\n  $ mapi folders create 1 "Finance"\n  $ mapi folders create 1 "Q1 2026" --parent 12\n')
    .action(
      run(async (context, deployment: string, name: string, options: { parent?: string }) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const parentId = options.parent === undefined ? null : parseFolder(options.parent, '--parent');
        const folder = unwrap(
          await context.client().POST('/api/v1/deployments/{deploymentId}/folders', {
            params: { path: { deploymentId } },
            body: { name, parentId },
          }),
        );
        if (context.json) writeJson(folder);
        else
          write(
            `Created folder "${folder.name}" (folder:${folder.id}) ${parentId === null ? 'at the workspace root' : `in folder:${parentId}`} of deployment ${deploymentId}.`,
          );
      }),
    );
  coversEach(folders, { tree: ['listFolders', 'listWorkspace'], path: ['getFolderAncestors'], create: ['createFolder'] });
}
