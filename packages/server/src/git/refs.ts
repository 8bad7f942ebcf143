import { runGit } from './run.js';

/**
 * Whether `name` is a branch name git accepts (`git check-ref-format --branch`), asked of git
 * itself: its rules (no `..`, no `@{`, no component starting with `.` or ending with `.lock`,
 * no control characters, ...) are longer than any copy of them would stay right.
 */
export async function isValidBranchName(name: string): Promise<boolean> {
  if (name === '' || name.length > 255 || name.startsWith('-') || name === 'HEAD' || /[\0\n\r]/.test(name)) return false;
  const { stdout, code } = await runGit({ args: ['check-ref-format', '--branch', name], okCodes: [1, 128] });
  return code === 0 && stdout.toString('utf8').trim() === name;
}
