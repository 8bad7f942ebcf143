import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from './errors.js';
import { shellArg } from './shell.js';

/**
 * A file that will hold a new API key. It is reserved before the key is created, so a path that
 * cannot be written (or is taken) fails before the server makes a key nobody could store; the
 * key is written to a private temporary file beside it and only then put in place.
 */
export interface KeyFile {
  readonly path: string;
  /** Writes the key and puts the file in place (mode 0600). */
  commit(key: string): void;
  /** Removes the reservation: the key was never created. */
  discard(): void;
}

/**
 * Reserves `target` for a key. Without `force` an existing file is refused, and stays refused if
 * one appears meanwhile: the key is linked into place, which never replaces a file. A missing
 * directory is created private (0700).
 */
export function reserveKeyFile(target: string, force: boolean): KeyFile {
  const file = path.resolve(target);
  if (!force && fs.existsSync(file)) {
    throw new UsageError(`${file} already exists; the key was not created.`, `Pass --force to replace it, or choose another file.`);
  }
  const dir = path.dirname(file);
  const temporary = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
  let fd: number;
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    // 'wx': never follows a symlink planted at that name, and the file is private from its first byte.
    fd = fs.openSync(temporary, 'wx', 0o600);
  } catch (error) {
    throw new UsageError(
      `Cannot write the key to ${file}: ${(error as Error).message}; the key was not created.`,
      'Choose a file in a directory you can write to.',
    );
  }
  const discard = () => {
    try {
      fs.closeSync(fd);
    } catch {
      // Already closed by commit.
    }
    fs.rmSync(temporary, { force: true });
  };
  return {
    path: file,
    discard,
    commit(key) {
      try {
        fs.writeSync(fd, `${key}\n`);
        fs.fsyncSync(fd);
        fs.closeSync(fd);
        // Filesystems that ignore the creation mode still get a private file.
        fs.chmodSync(temporary, 0o600);
        if (force) fs.renameSync(temporary, file);
        else {
          fs.linkSync(temporary, file);
          fs.rmSync(temporary);
        }
      } catch (error) {
        // The key exists on the server now: say where it still is rather than lose it.
        const kept = fs.existsSync(temporary) ? ` It is in ${temporary} (mode 0600): \`mv ${shellArg(temporary)} ${shellArg(file)}\`.` : '';
        // No `cause`: the error report would show the innermost message instead of this one, which already includes it.
        // eslint-disable-next-line preserve-caught-error
        throw new Error(`The key was created but could not be saved to ${file}: ${(error as Error).message}.${kept}`);
      }
    },
  };
}
