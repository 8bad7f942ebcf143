import fs from 'node:fs';

/*
 * What the server keeps on disk (its SQLite database, the deployments' repositories) is for its
 * own user alone, whatever the umask it was started with or the mode of the data directory an
 * operator made (volumes are often 0755): files 0600, directories 0700. Existing ones made by an
 * earlier version are narrowed on the next start.
 */

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** Creates `dir` (and its parents) if missing, and makes `dir` itself 0700. */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  narrow(dir, PRIVATE_DIR_MODE);
}

/**
 * Creates `file` empty if missing, and makes it and any of `companions` that exist (SQLite's
 * `-wal` and `-shm` files, which SQLite creates with the mode of the database file) 0600.
 */
export function ensurePrivateFile(file: string, companions: string[] = []): void {
  fs.closeSync(fs.openSync(file, 'a', PRIVATE_FILE_MODE));
  narrow(file, PRIVATE_FILE_MODE);
  for (const companion of companions) {
    try {
      narrow(companion, PRIVATE_FILE_MODE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

function narrow(target: string, mode: number): void {
  if ((fs.statSync(target).mode & 0o777) !== mode) fs.chmodSync(target, mode);
}
