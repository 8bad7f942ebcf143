import path from 'node:path';
import type { Command } from 'commander';
import { fetchTrusting, startDeviceSignIn, unwrap, type MapiClient } from '@mapi/client';
import { checkUrl, clientFor, readCaCert, type UrlSource } from '../config.js';
import { run, type Context } from '../context.js';
import { describeError, EXIT, UsageError, type Source } from '../errors.js';
import { readStdin } from '../items.js';
import { note, write, writeJson } from '../output.js';
import { checkProfileWritable, DEFAULT_PROFILE, saveProfile } from '../profile.js';
import { ask, askSecret, canPrompt, canPromptSecret } from '../prompt.js';
import { shellArg } from '../shell.js';
import { coversEach } from '../operations.js';

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

--device signs in through the browser instead of with an API key (OAuth device flow): login
prints a URL and a code, you open the URL, sign in and confirm the code, and login saves the
tokens it receives. The access token lasts an hour and is refreshed by later commands as it
expires; the refresh token is saved in the profile (mode 0600) and replaced on every refresh.
--scope "deployments:12 deployments:13" limits the sign-in to those deployments. Without an
identity provider, an admin confirms the code with \`npm run admin -- approve-device <code>
--user <email>\` or POST /api/v1/oauth/device-approvals.

Examples:
  $ mapi login
  $ mapi login --device --url https://mapi.example.com
  $ mapi login --url https://mapi.example.com
  $ mapi login --url https://127.0.0.1:8443 --ca-cert data/tls/localhost.crt --token-stdin < admin.key
  $ mapi login --profile staging --url https://staging.example.com
`;

interface LoginOptions {
  tokenStdin?: boolean;
  device?: boolean;
  scope?: string;
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
  throw new UsageError(
    'No server URL.',
    'Pass --url with the server address (e.g. --url https://mapi.example.com) or set MAPI_URL; stdin is not a terminal, so login cannot ask.',
  );
}

/** Never the profile's saved token: re-logging in to another URL must not send it an old secret. */
async function loginToken(context: Context, options: LoginOptions, again: string): Promise<{ value: string; source: Source }> {
  const piped = `\`${again} --token-stdin < admin.key\``;
  if (options.tokenStdin) {
    if (context.flags.token) throw new UsageError('Give the token with --token or --token-stdin, not both.');
    // On a terminal, a pasted key is read like the question's answer: hidden, ended by Enter.
    const value = canPromptSecret() ? await askSecret('API token (input hidden): ') : (await readStdin()).trim();
    if (!value)
      throw new UsageError(
        '--token-stdin read an empty token.',
        `Pipe the key in, e.g. ${piped} with the key in admin.key, or run \`${again}\` on a terminal to be asked for it.`,
      );
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

/** What to try after a login, on stderr so stdout stays the result; a named profile must be named again. */
function nextSteps(profileName: string): void {
  const mapi = profileName === DEFAULT_PROFILE ? 'mapi' : `mapi --profile ${shellArg(profileName)}`;
  note(`Next: \`${mapi} deployments list\` lists the deployments; \`mapi --help\` lists every command.`);
}

/** The user a key acts as: what login checks and whoami shows. */
async function currentUser(client: MapiClient) {
  return unwrap(await client.GET('/api/v1/users/me'));
}

/** `mapi login --device`: the device flow, then the tokens are checked and saved like a key. */
async function deviceLogin(context: Context, options: LoginOptions, target: { url: string; caPath?: string }): Promise<number> {
  if (options.tokenStdin || context.flags.token) throw new UsageError('--device signs in through the browser; leave out --token and --token-stdin.');
  const config = context.config();
  const ca = target.caPath ? readCaCert({ value: target.caPath, source: 'flag' }) : undefined;
  const fetch = ca ? fetchTrusting(ca) : undefined;
  const signIn = await startDeviceSignIn({ baseUrl: target.url, ...(fetch ? { fetch } : {}), ...(options.scope ? { scope: options.scope } : {}) });
  // On stderr: stdout stays the command's result (--json).
  process.stderr.write(
    `To sign in, open ${signIn.verificationUriComplete}\n(or ${signIn.verificationUri} and enter the code ${signIn.userCode}).\nWaiting for the confirmation; the code expires in ${Math.round(signIn.expiresIn / 60)} minutes.\n`,
  );
  const tokens = await signIn.wait();
  const user = await currentUser(clientFor({ url: target.url, token: tokens.accessToken, ...(ca ? { ca } : {}) }));
  saveProfile(config.profilePath, config.profileName, {
    url: target.url,
    token: tokens.accessToken,
    ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
    tokenExpiresAt: tokens.expiresAt,
    ...(target.caPath ? { caCert: target.caPath } : {}),
  });
  if (context.json) writeJson({ profile: config.profileName, path: config.profilePath, url: target.url, user, scope: tokens.scope ?? null });
  else {
    write(`Logged in to ${target.url} as ${user.email} (${user.role}) by device sign-in. Saved profile "${config.profileName}" to ${config.profilePath}.`);
    nextSteps(config.profileName);
  }
  return EXIT.OK;
}

export function registerLogin(program: Command): void {
  program
    .command('login')
    .option('--token-stdin', 'read the token from stdin (a pipe, a file, or one hidden line on a terminal); keeps it out of the shell history and process list')
    .option('--device', 'sign in through the browser (OAuth device flow) instead of with an API key')
    .option('--scope <scope>', 'with --device: the deployments the sign-in may reach, e.g. "deployments:12 deployments:13"')
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
        if (options.device) return deviceLogin(context, options, { url: url.value, ...(caPath ? { caPath } : {}) });
        if (options.scope) throw new UsageError('--scope goes with --device; an API key has its deployments set when it is created.');
        const token = await loginToken(context, options, again);
        const client = clientFor({ url: url.value, token: token.value, ...(ca ? { ca: readCaCert(ca) } : {}) });
        let user;
        try {
          user = await currentUser(client);
        } catch (error) {
          const lines = describeError(error, {
            tokenSource: token.source,
            profileName: config.profileName,
            url: url.value,
            urlSource: url.source,
            ...(ca ? { caSource: ca.source } : {}),
          });
          process.stderr.write(`${lines.join('\n')}\nNothing was saved.\n`);
          return EXIT.ERROR;
        }
        saveProfile(config.profilePath, config.profileName, { url: url.value, token: token.value, ...(caPath ? { caCert: caPath } : {}) });
        if (context.json) writeJson({ profile: config.profileName, path: config.profilePath, url: url.value, user });
        else {
          write(`Logged in to ${url.value} as ${user.email} (${user.role}). Saved profile "${config.profileName}" to ${config.profilePath}.`);
          nextSteps(config.profileName);
        }
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
          writeJson({
            user,
            url: config.url?.value,
            sources: { url: config.url?.source, token: config.token?.source, caCert: config.caCert?.source ?? null },
            profile: config.profileName,
          });
          return;
        }
        write(`${user.email} (user ${user.id}, ${user.role}) at ${config.url?.value}`);
        write(
          `url from ${config.url?.source}, token from ${config.token?.source}${config.caCert ? `, CA certificate from ${config.caCert.source}` : ''}; profile "${config.profileName}" in ${config.profilePath}`,
        );
      }),
    );
  coversEach(program, { login: ['getCurrentUser'], whoami: ['getCurrentUser'] });
}
