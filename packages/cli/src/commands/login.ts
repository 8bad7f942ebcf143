import path from 'node:path';
import type { Command } from 'commander';
import { unwrap, type MapiClient } from '@mapi/client';
import { checkUrl, clientFor, readCaCert, type UrlSource } from '../config.js';
import { run, type Context } from '../context.js';
import { describeError, EXIT, UsageError, type Source } from '../errors.js';
import { readStdin } from '../items.js';
import { write, writeJson } from '../output.js';
import { checkProfileWritable, DEFAULT_PROFILE, saveProfile } from '../profile.js';
import { ask, askSecret, canPrompt, canPromptSecret } from '../prompt.js';
import { shellArg } from '../shell.js';

const LOGIN_HELP = `
The URL comes from --url, MAPI_URL, or a question on the terminal (the profile's URL is offered);
the token from --token-stdin, --token, MAPI_TOKEN, or a hidden question on the terminal.
--token-stdin reads the token from standard input: piped or redirected (\`< admin.key\`), or, on a
terminal, one hidden line you paste. Either way it stays out of the shell history and of the process
list, where --token shows.
--ca-cert (or MAPI_CA_CERT) names a PEM file with the CA to trust, for a self-signed server;
its absolute path is saved with the profile. The token is checked with GET /api/v1/users/me
before anything is saved.

The profile file is $MAPI_CONFIG_DIR/config.json, else $XDG_CONFIG_HOME/mapi/config.json, else
~/.config/mapi/config.json (%APPDATA%\\mapi\\config.json on Windows); it is written with mode 0600
(an existing file is chmodded too). A directory login creates gets mode 0700; an existing one keeps
its mode. Later commands use it unless flags or MAPI_* variables override a setting
(flags > environment > profile).

Examples:
  $ mapi login
  $ mapi login --url https://mapi.example.com
  $ mapi login --url https://127.0.0.1:8443 --ca-cert data/tls/localhost.crt --token-stdin < admin.key
  $ mapi login --profile staging --url https://staging.example.com
`;

interface LoginOptions {
  tokenStdin?: boolean;
}

async function loginUrl(context: Context): Promise<{ value: string; source: UrlSource }> {
  const config = context.config();
  if (config.url && config.url.source !== 'profile') return config.url;
  if (canPrompt()) {
    const offered = config.profile?.url;
    const answer = await ask(offered ? `Server URL [${offered}]: ` : 'Server URL (e.g. https://mapi.example.com): ');
    if (answer) return { value: answer, source: 'prompt' };
    if (offered) return { value: offered, source: 'profile' };
  } else if (config.url) {
    return config.url;
  }
  throw new UsageError('No server URL.', 'Pass --url with the server address (e.g. --url https://mapi.example.com) or set MAPI_URL; stdin is not a terminal, so login cannot ask.');
}

/** Never the profile's saved token: re-logging in to another URL must not send it an old secret. */
async function loginToken(context: Context, options: LoginOptions, again: string): Promise<{ value: string; source: Source }> {
  const piped = `\`${again} --token-stdin < admin.key\``;
  if (options.tokenStdin) {
    if (context.flags.token) throw new UsageError('Give the token with --token or --token-stdin, not both.');
    // On a terminal, a pasted key is read like the question's answer: hidden, ended by Enter.
    const value = canPromptSecret() ? await askSecret('API token (input hidden): ') : (await readStdin()).trim();
    if (!value) throw new UsageError('--token-stdin read an empty token.', `Pipe the key in, e.g. ${piped} with the key in admin.key, or run \`${again}\` on a terminal to be asked for it.`);
    return { value, source: 'flag' };
  }
  if (context.flags.token) return { value: context.flags.token, source: 'flag' };
  if (process.env.MAPI_TOKEN) return { value: process.env.MAPI_TOKEN, source: 'environment' };
  if (canPrompt()) {
    const value = await askSecret('API token (input hidden): ');
    if (value) return { value, source: 'flag' };
  }
  throw new UsageError(
    'No API token.',
    `Pipe it in with --token-stdin, e.g. ${piped} with the key in admin.key (unlike --token, it stays out of the shell history and the process list), or set MAPI_TOKEN. An admin creates keys with \`mapi api-keys create --name laptop\`.`,
  );
}

/** The user a key acts as: what login checks and whoami shows. */
async function currentUser(client: MapiClient) {
  return unwrap(await client.GET('/api/v1/users/me'));
}

export function registerLogin(program: Command): void {
  program
    .command('login')
    .option('--token-stdin', 'read the token from stdin (a pipe, a file, or one hidden line on a terminal); keeps it out of the shell history and process list')
    .description('Check a server URL and API token, and save them as a profile for later commands')
    .addHelpText('after', LOGIN_HELP)
    .action(
      run(async (context, options: LoginOptions) => {
        const config = context.config();
        const url = await loginUrl(context);
        checkUrl(url.value, url.source, config.profileName);
        // Before asking for the token: a profile that cannot be saved makes the rest pointless.
        checkProfileWritable(config.profilePath);
        // The saved CA only applies to the URL it was saved for.
        const ca = config.caCert && (config.caCert.source !== 'profile' || config.profile?.url === url.value) ? config.caCert : undefined;
        const caPath = ca ? path.resolve(ca.value) : undefined;
        const again = [
          'mapi login',
          ...(config.profileName === DEFAULT_PROFILE ? [] : ['--profile', shellArg(config.profileName)]),
          '--url',
          shellArg(url.value),
          ...(caPath ? ['--ca-cert', shellArg(caPath)] : []),
        ].join(' ');
        const token = await loginToken(context, options, again);
        const client = clientFor({ url: url.value, token: token.value, ...(ca ? { ca: readCaCert(ca) } : {}) });
        let user;
        try {
          user = await currentUser(client);
        } catch (error) {
          const lines = describeError(error, { tokenSource: token.source, profileName: config.profileName, url: url.value, urlSource: url.source, ...(ca ? { caSource: ca.source } : {}) });
          process.stderr.write(`${lines.join('\n')}\nNothing was saved.\n`);
          return EXIT.ERROR;
        }
        saveProfile(config.profilePath, config.profileName, { url: url.value, token: token.value, ...(caPath ? { caCert: caPath } : {}) });
        if (context.json) writeJson({ profile: config.profileName, path: config.profilePath, url: url.value, user });
        else write(`Logged in to ${url.value} as ${user.email} (${user.role}). Saved profile "${config.profileName}" to ${config.profilePath}.`);
        return EXIT.OK;
      }),
    );

  program
    .command('whoami')
    .description('Show the user the configured token acts as, and where the settings came from')
    .addHelpText('after', '\nExamples:\n  $ mapi whoami\n  $ MAPI_TOKEN=mapi_... mapi whoami --json\n')
    .action(
      run(async (context) => {
        const user = await currentUser(context.client());
        const config = context.config();
        if (context.json) {
          writeJson({ user, url: config.url?.value, sources: { url: config.url?.source, token: config.token?.source, caCert: config.caCert?.source ?? null }, profile: config.profileName });
          return;
        }
        write(`${user.email} (user ${user.id}, ${user.role}) at ${config.url?.value}`);
        write(`url from ${config.url?.source}, token from ${config.token?.source}${config.caCert ? `, CA certificate from ${config.caCert.source}` : ''}; profile "${config.profileName}" in ${config.profilePath}`);
      }),
    );
}
