import fs from 'node:fs';
import path from 'node:path';
import { createClient, type MapiClient } from '@mapi/client';
import { UsageError, type ErrorContext, type Source } from './errors.js';
import { configPath, DEFAULT_PROFILE, isExposed, readProfileFile, type Profile } from './profile.js';

/** The global options, as commander parses them. */
export interface GlobalFlags {
  url?: string;
  token?: string;
  caCert?: string;
  profile?: string;
  json?: boolean;
}

export interface Setting {
  value: string;
  source: Source;
}

export interface ResolvedConfig {
  url?: Setting;
  token?: Setting;
  /** Path of a PEM file; a relative path from a flag or the environment is taken from the working directory. */
  caCert?: Setting;
  profileName: string;
  profilePath: string;
  /** The selected profile as stored, if any (login reuses its URL and CA). */
  profile?: Profile;
  /** Profiles in the file, for a hint when the one asked for is not there. */
  knownProfiles: string[];
}

function pick(flag: string | undefined, environment: string | undefined, profile: string | undefined): Setting | undefined {
  // An empty value counts as unset, so `MAPI_TOKEN= mapi ...` falls through to the profile.
  if (flag) return { value: flag, source: 'flag' };
  if (environment) return { value: environment, source: 'environment' };
  if (profile) return { value: profile, source: 'profile' };
  return undefined;
}

/**
 * Each setting on its own: flag, then environment, then the profile. So MAPI_TOKEN overrides the
 * saved token while the saved URL still applies.
 */
export function resolveConfig(flags: GlobalFlags, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const profileName = flags.profile || env.MAPI_PROFILE || DEFAULT_PROFILE;
  const profilePath = configPath(env);
  const file = readProfileFile(profilePath);
  const profile = file?.profiles[profileName];
  if (profile && isExposed(profilePath)) {
    process.stderr.write(`warning: ${profilePath} holds API keys but other users can read it; run \`chmod 600 ${profilePath}\`.\n`);
  }
  return {
    url: pick(flags.url, env.MAPI_URL, profile?.url),
    token: pick(flags.token, env.MAPI_TOKEN, profile?.token),
    caCert: pick(flags.caCert, env.MAPI_CA_CERT, profile?.caCert),
    profileName,
    profilePath,
    ...(profile ? { profile } : {}),
    knownProfiles: Object.keys(file?.profiles ?? {}),
  };
}

/** Checks the URL early so a typo is a clear usage error instead of a network failure. */
export function checkUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`"${url}" is not a URL.`, 'Give the server address, e.g. --url https://mapi.example.com');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new UsageError(`"${url}" is not an https:// URL.`, 'Give the server address, e.g. --url https://mapi.example.com');
  }
  return url;
}

export function readCaCert(setting: Setting): string {
  try {
    return fs.readFileSync(path.resolve(setting.value), 'utf8');
  } catch (error) {
    const where = setting.source === 'flag' ? '--ca-cert' : setting.source === 'environment' ? 'MAPI_CA_CERT' : 'the profile';
    throw new UsageError(`Cannot read the CA certificate ${setting.value} (from ${where}): ${(error as Error).message}`, 'Pass the path of a PEM file with --ca-cert or MAPI_CA_CERT.');
  }
}

export function errorContext(config: ResolvedConfig): ErrorContext {
  return {
    profileName: config.profileName,
    ...(config.token ? { tokenSource: config.token.source } : {}),
    ...(config.caCert ? { caSource: config.caCert.source } : {}),
    ...(config.url ? { url: config.url.value } : {}),
  };
}

/** A client for the resolved settings; missing ones are usage errors that say where to set them. */
export function connect(config: ResolvedConfig): MapiClient {
  if ((!config.url || !config.token) && !config.profile && config.profileName !== DEFAULT_PROFILE) {
    // Naming a profile that does not exist is most likely a typo: say so rather than "no URL".
    const known = config.knownProfiles.length > 0 ? ` Known profiles: ${config.knownProfiles.join(', ')}.` : '';
    throw new UsageError(`No profile "${config.profileName}" in ${config.profilePath}.`, `Create it with \`mapi login --profile ${config.profileName}\`.${known}`);
  }
  if (!config.url) {
    throw new UsageError('No server URL is set.', 'Run `mapi login`, set MAPI_URL, or pass --url https://HOST[:PORT].');
  }
  if (!config.token) {
    throw new UsageError('No API token is set.', 'Run `mapi login`, set MAPI_TOKEN, or pass --token (an API key, mapi_...).');
  }
  const ca = config.caCert ? readCaCert(config.caCert) : undefined;
  return createClient({ baseUrl: checkUrl(config.url.value), token: config.token.value, ...(ca ? { ca } : {}) });
}
