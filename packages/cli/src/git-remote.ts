import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ResolvedConfig } from './config.js';
import { UsageError } from './errors.js';
import { shellArg } from './shell.js';

/** A deployment's model repository on the server at `base` (a profile's URL, no /api/v1). */
export function repositoryUrl(base: string, deploymentId: number): string {
  return `${base.replace(/\/+$/, '')}/build/git/${deploymentId}.git`;
}

/** What git asks a credential helper, one `key=value` per line (gitcredentials(7)). */
export type CredentialRequest = Map<string, string>;

export function parseCredentialRequest(text: string): CredentialRequest {
  const request: CredentialRequest = new Map();
  for (const line of text.split(/\r?\n/)) {
    if (line === '') continue;
    const at = line.indexOf('=');
    if (at <= 0) continue;
    // Repeated keys (wwwauth[], capability[]) say nothing about which server is asked: the first is kept.
    const key = line.slice(0, at);
    if (!request.has(key)) request.set(key, line.slice(at + 1));
  }
  return request;
}

/**
 * True when git asks for the server at `base`: same protocol and host (with its port; git leaves
 * out a default port as URL does). The path is not compared: one key opens every repository the
 * server holds, and git only sends a path with credential.useHttpPath.
 */
export function asksFor(request: CredentialRequest, base: string): boolean {
  let server: URL;
  try {
    server = new URL(base);
  } catch {
    return false;
  }
  const protocol = request.get('protocol');
  const host = request.get('host');
  if (!protocol || !host) return false;
  return `${protocol}:` === server.protocol && host.toLowerCase() === server.host.toLowerCase();
}

/** The compiled CLI's entry, absolute: git runs the helper from the clone, where `mapi` may not be on PATH. */
export function cliEntry(): string {
  return fileURLToPath(new URL('../bin/mapi.js', import.meta.url));
}

/**
 * The `credential.helper` value that runs this CLI as git's helper for one profile. The leading
 * `!` makes git run it through the shell with the action appended, so each part is quoted for a
 * POSIX shell; the node binary is named too, so a clone works without `mapi` on PATH or under npx.
 */
export function helperCommand(profileName: string, node = process.execPath, entry = cliEntry()): string {
  return `!${quote(node)} ${quote(entry)} --profile ${quote(profileName)} git-credential`;
}

/** Always quoted, unlike shellArg: a path is one argument even if it looks harmless today. */
function quote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The configuration a clone carries: the helper for its URL (after a reset, so no other helper answers or stores the key) and the CA to trust. */
export function cloneConfig(url: string, profileName: string, caCert?: string): [string, string][] {
  return [
    [`credential.${url}.helper`, ''],
    [`credential.${url}.helper`, helperCommand(profileName)],
    ...(caCert ? ([[`http.${url}.sslCAInfo`, path.resolve(caCert)]] as [string, string][]) : []),
  ];
}

/**
 * git's endpoint takes API keys only, not the hour-long access tokens of a browser sign-in
 * (`mapi login --device`): such a profile is refused here with what to do, rather than by the
 * server with a 401 that git reports as a bad password.
 */
export function checkGitKey(config: ResolvedConfig): void {
  if (config.token?.source !== 'profile' || config.profile?.refreshToken === undefined) return;
  const profile = config.profileName === 'default' ? '' : ` --profile ${shellArg(config.profileName)}`;
  const login = [
    'mapi login --profile git',
    ...(config.url ? ['--url', shellArg(config.url.value)] : []),
    ...(config.caCert ? ['--ca-cert', shellArg(path.resolve(config.caCert.value))] : []),
    '--token-stdin < git.key',
  ].join(' ');
  throw new UsageError(
    `Profile "${config.profileName}" signed in through the browser; git over HTTPS takes an API key.`,
    `Create one with \`mapi${profile} api-keys create --name git --output git.key\`, save it in a profile of its own with \`${login}\`, and use --profile git.`,
  );
}
