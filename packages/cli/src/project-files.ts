/** A data-model project on disk: the files `mapi model push` sends, and where `mapi model pull` may write. */
import fs from 'node:fs';
import path from 'node:path';
import { modelPathProblem } from '@mapi/client';
import { UsageError } from './errors.js';

export interface LocalFile {
  /** Relative to the project directory, with forward slashes. */
  path: string;
  content: Uint8Array;
}

export interface Project {
  files: LocalFile[];
  /** Symbolic links and other entries that are neither files nor directories, left out. */
  skipped: string[];
}

/** Left out of a push: what git would not track here, tools' folders, and every hidden file or directory. */
export function isIgnored(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules';
}

/** The directory argument, checked: it must exist and be a directory. */
export function projectDir(dir: string, what = 'dir'): string {
  const resolved = path.resolve(dir);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(resolved);
  } catch {
    throw new UsageError(`${what} ${dir} does not exist.`);
  }
  if (!stat.isDirectory()) throw new UsageError(`${what} ${dir} is not a directory.`);
  return resolved;
}

/**
 * Every file below `root` (hidden entries and node_modules left out), sorted by path. Symbolic
 * links are not followed: one could point anywhere, a directory link could loop.
 */
export async function readProject(root: string): Promise<Project> {
  const files: LocalFile[] = [];
  const skipped: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    const entries = await fs.promises.readdir(dir, { withFileTypes: true });
    for (const entry of entries) {
      if (isIgnored(entry.name)) continue;
      const relative = prefix + entry.name;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full, `${relative}/`);
      else if (entry.isFile()) files.push({ path: relative, content: await fs.promises.readFile(full) });
      else skipped.push(relative);
    }
  };
  await walk(root, '');
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, skipped };
}

function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative));
}

/**
 * Where a file of the server's tree goes below `root`, refusing any path that would land outside
 * it (an absolute path, a `..` segment, a backslash that Windows would read as a separator).
 */
export function targetOf(root: string, file: string): string {
  const problem = modelPathProblem(file);
  const target = path.resolve(root, ...file.split('/'));
  if (problem !== null || !isInside(root, target) || target === root) {
    throw new UsageError(`Refusing to write ${JSON.stringify(file)}: ${problem ?? 'it would land outside the directory'}. Nothing more was written.`);
  }
  return target;
}

/**
 * Writes `files` below `root`, creating directories. Every path is checked before the first
 * write; then each directory is checked again once created, so a symbolic link inside `root`
 * cannot carry a write outside it, and an existing link is never written through.
 */
export async function writeProject(root: string, files: readonly { path: string; content: string }[]): Promise<void> {
  const targets = files.map((file) => targetOf(root, file.path));
  const realRoot = await fs.promises.realpath(root);
  for (const [i, file] of files.entries()) {
    const target = targets[i] as string;
    const parent = path.dirname(target);
    await fs.promises.mkdir(parent, { recursive: true });
    if (!isInside(realRoot, await fs.promises.realpath(parent)))
      throw new UsageError(`Refusing to write ${JSON.stringify(file.path)}: ${path.relative(root, parent)} is a link out of the directory.`);
    const existing = await fs.promises.lstat(target).catch(() => undefined);
    if (existing?.isSymbolicLink()) throw new UsageError(`Refusing to write ${JSON.stringify(file.path)}: it is a symbolic link here.`);
    if (existing?.isDirectory()) throw new UsageError(`Cannot write ${JSON.stringify(file.path)}: a directory of that name exists.`);
    await fs.promises.writeFile(target, file.content, 'utf8');
  }
}
