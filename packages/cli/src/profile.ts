import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from './errors.js';

/** What `mapi login` stores for one server. The token is a secret: the file is kept at mode 0600. */
export interface Profile {
  url: string;
  token: string;
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
    throw new UsageError(`Cannot read the profile file ${file}: ${(error as Error).message}`);
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

/**
 * Saves one profile, keeping the others. Written to a temporary file (created 0600) then renamed,
 * so a crash never leaves half a file and the token is never readable by others, not even briefly.
 * The final chmod covers a file that existed with looser permissions and filesystems that ignore
 * the creation mode.
 */
export function saveProfile(file: string, name: string, profile: Profile): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  const current = readProfileFile(file) ?? { profiles: {} };
  const next: ProfileFile = { ...current, profiles: { ...current.profiles, [name]: profile } };
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temporary, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    fs.chmodSync(temporary, 0o600);
    fs.renameSync(temporary, file);
  } finally {
    fs.rmSync(temporary, { force: true });
  }
  fs.chmodSync(file, 0o600);
}
