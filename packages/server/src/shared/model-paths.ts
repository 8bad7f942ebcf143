import { ApiError } from './problems.js';

/** The longest repository path accepted (git itself allows 4096 on most systems; a model path never needs it). */
export const MAX_PATH_LENGTH = 1024;

/**
 * A repository-relative path as the data-model routes accept it: forward slashes, no empty,
 * `.` or `..` segments, not absolute, nothing inside `.git`, no NUL, backslash or control
 * characters. Paths are confined to the repository before any git command sees them; `pointer`
 * names the offending part of the request.
 */
export function normalizeModelPath(raw: string, pointer: string): string {
  const reason = pathProblem(raw);
  if (reason !== null) {
    throw new ApiError('VALIDATION_FAILED', `Path ${JSON.stringify(raw)} is not allowed: ${reason}.`, { errors: [{ pointer, message: reason }] });
  }
  return raw;
}

function pathProblem(path: string): string | null {
  if (path === '') return 'it is empty';
  if (path.length > MAX_PATH_LENGTH) return `it is longer than ${MAX_PATH_LENGTH} characters`;
  if (path.includes('\\')) return 'backslashes are not path separators here; use /';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'it holds a control character';
  if (path.startsWith('/')) return 'it is absolute; give it relative to the repository root';
  const segments = path.split('/');
  if (segments.some((s) => s === '')) return 'it has an empty segment (a trailing or doubled /)';
  if (segments.some((s) => s === '.' || s === '..')) return 'it has a . or .. segment';
  if (segments.some((s) => s.toLowerCase() === '.git')) return 'it points into .git';
  return null;
}

/** A project root ('' for the repository root, else a normalized directory path without a trailing slash). */
export function normalizeProjectRoot(raw: string, pointer: string): string {
  const trimmed = raw.replace(/^\.?\/+/, '').replace(/\/+$/, '');
  return trimmed === '' || trimmed === '.' ? '' : normalizeModelPath(trimmed, pointer);
}
