import fs from 'node:fs';
import path from 'node:path';
import { createClient, type MapiClient } from '@mapi/client';
import { UsageError, type ErrorContext, type Source } from './errors.js';
import { configPath, DEFAULT_PROFILE, isExposed, readProfileFile, type Profile } from './profile.js';
import { announceUnreachable } from './reachability.js';
import { shellArg } from './shell.js';
import { refreshingSession } from './session.js';

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
  // An empty variable counts as unset, so `MAPI_TOKEN= mapi ...` falls through to the profile.
  if (flag !== undefined) return { value: flag, source: 'flag' };
  if (environment) return { value: environment, source: 'environment' };
  if (profile) return { value: profile, source: 'profile' };
  return undefined;
}

/**
 * Each setting on its own: flag, then environment, then the profile. So MAPI_TOKEN overrides the
 * saved token while the saved URL still applies.
 */
export function resolveConfig(flags: GlobalFlags, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  // An empty flag is a mistake (an unset shell variable, say), not a request for the next source.
  for (const [name, value] of [
    ['--url', flags.url],
    ['--token', flags.token],
    ['--ca-cert', flags.caCert],
    ['--profile', flags.profile],
  ] as const) {
    if (value !== undefined && value.trim() === '')
      throw new UsageError(`${name} is empty.`, `Leave ${name} out to use the environment or the profile, or give it a value.`);
  }
  const profileName = flags.profile || env.MAPI_PROFILE || DEFAULT_PROFILE;
  const profilePath = configPath(env);
  const file = readProfileFile(profilePath);
  const profile = file?.profiles[profileName];
  if (profile && isExposed(profilePath)) {
    process.stderr.write(`warning: ${profilePath} holds API keys but other users can read it; run \`chmod 600 ${shellArg(profilePath)}\`.\n`);
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

/** Where a URL came from ('prompt': typed at `mapi login`'s question), so an error names the place to fix. */
export type UrlSource = Source | 'prompt';

function urlPlace(source: UrlSource, profileName: string): { from: string; fix: (url: string) => string } {
  switch (source) {
    case 'flag':
      return { from: 'from --url', fix: (url) => `pass --url ${shellArg(url)}` };
    case 'environment':
      return { from: 'from MAPI_URL', fix: (url) => `run \`export MAPI_URL=${shellArg(url)}\`` };
    case 'profile':
      return {
        from: `saved in profile "${profileName}"`,
        fix: (url) =>
          `run \`mapi login${profileName === DEFAULT_PROFILE ? '' : ` --profile ${shellArg(profileName)}`} --url ${shellArg(url)}\` to save it there`,
      };
    case 'prompt':
      return { from: 'as typed', fix: (url) => `answer ${url}` };
  }
}

/**
 * Checks the URL early so a mistake is a usage error naming where the URL came from, instead of the
 * client's TypeError or a network failure: http:// would only fail after retries ("other side
 * closed"), as the server speaks nothing but HTTPS.
 */
export function checkUrl(url: string, source: UrlSource, profileName = DEFAULT_PROFILE): string {
  const place = urlPlace(source, profileName);
  const example = (fix: string) => `Give the server address: ${fix}, e.g. https://mapi.example.com.`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`"${url}" (${place.from}) is not a URL.`, example(place.fix('https://HOST[:PORT]')));
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new UsageError(`"${url}" (${place.from}) is not an https:// URL.`, example(place.fix('https://HOST[:PORT]')));
  }
  const suffix = /\/(build\/)?api\/v1\/?$/;
  // The address the user most likely meant, whatever else is wrong with it.
  const address = `https://${parsed.host}${parsed.pathname.replace(suffix, '').replace(/\/$/, '')}`;
  if (parsed.protocol === 'http:') {
    throw new UsageError(`"${url}" (${place.from}) is an http:// URL, but the server only speaks HTTPS.`, `Use https://: ${place.fix(address)}.`);
  }
  if (suffix.test(parsed.pathname)) {
    throw new UsageError(
      `"${url}" (${place.from}) ends with /api/v1, which every request path already starts with.`,
      `Drop the /api/v1 suffix: ${place.fix(address)}.`,
    );
  }
  if (parsed.search || parsed.hash) {
    throw new UsageError(`"${url}" (${place.from}) carries a query or fragment.`, `Give only the server address: ${place.fix(address)}.`);
  }
  return url;
}

export function readCaCert(setting: Setting): string {
  try {
    return fs.readFileSync(path.resolve(setting.value), 'utf8');
  } catch (error) {
    const where = setting.source === 'flag' ? '--ca-cert' : setting.source === 'environment' ? 'MAPI_CA_CERT' : 'the profile';
    throw new UsageError(
      `Cannot read the CA certificate ${setting.value} (from ${where}): ${(error as Error).message}`,
      'Pass the path of a PEM file with --ca-cert or MAPI_CA_CERT.',
    );
  }
}

export function errorContext(config: ResolvedConfig): ErrorContext {
  return {
    profileName: config.profileName,
    ...(config.token ? { tokenSource: config.token.source } : {}),
    ...(config.caCert ? { caSource: config.caCert.source } : {}),
    ...(config.url ? { url: config.url.value, urlSource: config.url.source } : {}),
  };
}

/**
 * The client every command uses: it says once, on stderr, that the server cannot be reached,
 * while the client's retries go on.
 */
export function clientFor(options: { url: string; token: string; ca?: string }): MapiClient {
  return createClient({ baseUrl: options.url, token: options.token, ...(options.ca ? { ca: options.ca } : {}), retry: announceUnreachable(options.url) });
}

/**
 * A client for the resolved settings; missing ones are usage errors that say where to set them.
 * `anonymous`: for operations that take no credential (health, public keys), a missing token is
 * fine and none is sent.
 */
export function connect(config: ResolvedConfig, { anonymous = false }: { anonymous?: boolean } = {}): MapiClient {
  if ((!config.url || !config.token) && !config.profile && config.profileName !== DEFAULT_PROFILE) {
    // Naming a profile that does not exist is most likely a typo: say so rather than "no URL".
    const known = config.knownProfiles.length > 0 ? ` Known profiles: ${config.knownProfiles.join(', ')}.` : '';
    throw new UsageError(
      `No profile "${config.profileName}" in ${config.profilePath}.`,
      `Create it with \`mapi login --profile ${shellArg(config.profileName)}\`.${known}`,
    );
  }
  const login = config.profileName === DEFAULT_PROFILE ? 'mapi login' : `mapi login --profile ${shellArg(config.profileName)}`;
  if (!config.url) {
    throw new UsageError(
      'No server URL is set.',
      `Run \`${login}\`, set MAPI_URL, or pass --url with the server address (e.g. --url https://mapi.example.com).`,
    );
  }
  const ca = config.caCert ? readCaCert(config.caCert) : undefined;
  if (!config.token && anonymous) {
    // The client always sends a bearer token; the placeholder is taken off before the request leaves.
    const client = clientFor({ url: checkUrl(config.url.value, config.url.source, config.profileName), token: 'anonymous', ...(ca ? { ca } : {}) });
    client.use({
      onRequest: ({ request }) => {
        request.headers.delete('Authorization');
        return request;
      },
    });
    return client;
  }
  if (!config.token) {
    throw new UsageError('No API token is set.', `Run \`${login}\`, or set MAPI_TOKEN to an API key (mapi_...).`);
  }
  const client = clientFor({ url: checkUrl(config.url.value, config.url.source, config.profileName), token: config.token.value, ...(ca ? { ca } : {}) });
  // A device sign-in's access token is refreshed as it expires; --token and MAPI_TOKEN are used as given.
  if (config.token.source === 'profile' && config.profile?.refreshToken && config.url.source === 'profile') {
    refreshingSession(client, { file: config.profilePath, name: config.profileName, profile: config.profile, ...(ca ? { ca } : {}) });
  }
  return client;
}
