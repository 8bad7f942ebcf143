import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from './errors.js';
import { shellArg } from './shell.js';

/** What `mapi login` stores for one server. The token is a secret: the file is kept at mode 0600. */
export interface Profile {
  url: string;
  /** An API key, or the current OAuth access token of a device sign-in (`mapi login --device`). */
  token: string;
  /** Device sign-in: the refresh token (rotated on every refresh) and when `token` expires. */
  refreshToken?: string;
  tokenExpiresAt?: string;
  /** Absolute path of a PEM file with the CA to trust (self-signed servers). */
  caCert?: string;
}

export interface ProfileFile {
  profiles: Record<string, Profile>;
}

export const DEFAULT_PROFILE = 'default';

/**
 * The per-user configuration directory. MAPI_CONFIG_DIR comes first so tests and scripts can
 * isolate themselves; then the platform's convention (APPDATA on Windows, XDG elsewhere).
 */
export function configDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.MAPI_CONFIG_DIR) return path.resolve(env.MAPI_CONFIG_DIR);
  if (platform === 'win32' && env.APPDATA) return path.join(env.APPDATA, 'mapi');
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(os.homedir(), '.config');
  return path.join(base, 'mapi');
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configDir(env), 'config.json');
}

/** The profile file, or null when there is none yet. A file that cannot be parsed is an error, not "no profile". */
export function readProfileFile(file: string): ProfileFile | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UsageError(`Cannot read the profile file ${file}: ${(error as Error).message}`, placeHint(path.dirname(file)));
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`The profile file ${file} is not valid JSON. Fix it, or delete it and run \`mapi login\` again.`);
  }
  const profiles = (parsed as { profiles?: unknown } | null)?.profiles;
  if (typeof profiles !== 'object' || profiles === null || Array.isArray(profiles)) {
    throw new UsageError(`The profile file ${file} has no "profiles" object. Delete it and run \`mapi login\` again.`);
  }
  return { profiles: profiles as Record<string, Profile> };
}

/** True when group or others may read the file: a token there is exposed to other local users. */
export function isExposed(file: string): boolean {
  if (process.platform === 'win32') return false;
  try {
    return (fs.statSync(file).mode & 0o077) !== 0;
  } catch {
    return false;
  }
}

function placeHint(dir: string): string {
  return `The profile lives in ${dir}: make that a directory you can read and write, or set MAPI_CONFIG_DIR to one of your own.`;
}

/**
 * Checks, before login sends the token anywhere, that the profile can be saved: the directory (or
 * the nearest existing one above it, where it would be created) is writable. Creates nothing.
 */
export function checkProfileWritable(file: string): void {
  let dir = path.dirname(file);
  for (let up = path.dirname(dir); !fs.existsSync(dir) && up !== dir; up = path.dirname(dir)) dir = up;
  try {
    if (!fs.statSync(dir).isDirectory()) throw new Error(`${dir} is not a directory`);
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
  } catch (error) {
    throw new UsageError(`Cannot save the profile to ${file}: ${(error as Error).message}`, placeHint(path.dirname(file)));
  }
}

/**
 * Saves one profile, keeping the others. Written to a temporary file (created 0600) then renamed,
 * so a crash never leaves half a file and the token is never readable by others, not even briefly.
 * The final chmod covers a file that existed with looser permissions and filesystems that ignore
 * the creation mode.
 */
export function saveProfile(file: string, name: string, profile: Profile): void {
  const dir = path.dirname(file);
  const current = readProfileFile(file) ?? { profiles: {} };
  const next: ProfileFile = { ...current, profiles: { ...current.profiles, [name]: profile } };
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    // Only a directory made here is chmodded: MAPI_CONFIG_DIR may name $HOME or a shared folder,
    // whose permissions are not ours to change. The 0600 file keeps the token private either way.
    if (fs.mkdirSync(dir, { recursive: true, mode: 0o700 }) !== undefined) fs.chmodSync(dir, 0o700);
    else if (isWritableByOthers(dir)) {
      process.stderr.write(
        `warning: users other than you may write to ${dir}, so they could replace or delete ${path.basename(file)}; consider \`chmod go-w ${shellArg(dir)}\` or another MAPI_CONFIG_DIR.\n`,
      );
    }
    fs.writeFileSync(temporary, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    fs.chmodSync(temporary, 0o600);
    fs.renameSync(temporary, file);
    fs.chmodSync(file, 0o600);
  } catch (error) {
    throw new UsageError(`Cannot save the profile to ${file}: ${(error as Error).message}`, placeHint(dir));
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

/** A directory others may write to, short of a sticky one (like /tmp), where they cannot replace our file. */
function isWritableByOthers(dir: string): boolean {
  if (process.platform === 'win32') return false;
  const { mode } = fs.statSync(dir);
  return (mode & 0o022) !== 0 && (mode & 0o1000) === 0;
}
