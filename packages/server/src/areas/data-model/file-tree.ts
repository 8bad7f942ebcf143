import type { TreeEntry } from '../../git/repository.js';

export interface FileNode {
  type: 'file';
  name: string;
  path: string;
  size: number;
  hash: string;
  content?: string;
}
export interface DirectoryNode {
  type: 'directory';
  name: string;
  path: string;
  children: TreeNode[];
}
export type TreeNode = FileNode | DirectoryNode;

/** Directories first, then by name (code-point order, as git sorts): the order of every level, and of pages. */
export function compareNodes(a: { type: string; name: string }, b: { type: string; name: string }): number {
  if (a.type !== b.type) return a.type === 'directory' ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The nested tree of a flat file list. */
export function nest(files: readonly TreeEntry[]): TreeNode[] {
  const root: DirectoryNode = { type: 'directory', name: '', path: '', children: [] };
  const directories = new Map<string, DirectoryNode>([['', root]]);
  const directory = (path: string): DirectoryNode => {
    const known = directories.get(path);
    if (known) return known;
    const slash = path.lastIndexOf('/');
    const node: DirectoryNode = { type: 'directory', name: path.slice(slash + 1), path, children: [] };
    directory(slash === -1 ? '' : path.slice(0, slash)).children.push(node);
    directories.set(path, node);
    return node;
  };
  for (const file of files) {
    const slash = file.path.lastIndexOf('/');
    directory(slash === -1 ? '' : file.path.slice(0, slash)).children.push({
      type: 'file',
      name: file.path.slice(slash + 1),
      path: file.path,
      size: file.size,
      hash: file.sha,
    });
  }
  for (const node of directories.values()) node.children.sort(compareNodes);
  return root.children;
}

/** Every file node below `nodes`. */
export function* filesIn(nodes: readonly TreeNode[]): Generator<FileNode> {
  for (const node of nodes) {
    if (node.type === 'file') yield node;
    else yield* filesIn(node.children);
  }
}
