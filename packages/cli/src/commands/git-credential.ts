import type { Command } from 'commander';
import { checkUrl } from '../config.js';
import { run } from '../context.js';
import { EXIT, UsageError } from '../errors.js';
import { readStdin } from '../items.js';
import { asksFor, checkGitKey, parseCredentialRequest } from '../git-remote.js';

const HELP = `
git runs this command as a credential helper (gitcredentials(7)): \`mapi model clone\` sets it up
for the clone's URL, so git gets the profile's API key when it fetches or pushes and the key is
never written into the repository's URL or .git/config. git sends the action (get, store or
erase) as the argument and key=value lines on stdin.

get: when protocol and host (with the port) are the profile's server, prints username and
password (the profile's API key, or MAPI_TOKEN when set); for any other server prints nothing,
so git asks its other helpers. store and erase do nothing: the key lives in the profile.
Exit codes: 0 answered (or nothing to answer), 1 the server is this profile's but it has no token,
or a usage error.

To use it for a clone made otherwise:
  git config credential.https://mapi.example.com/build/git/1.git.helper \\
    "!mapi --profile default git-credential"

Examples:
  $ printf 'protocol=https\\nhost=mapi.example.com\\n\\n' | mapi git-credential get
  $ mapi --profile staging git-credential get < request.txt
`;

export function registerGitCredential(program: Command): void {
  program
    .command('git-credential')
    .argument('<action>', 'what git asks: get, store or erase')
    .description("git's credential helper: answers git with the profile's API key for the profile's server")
    .addHelpText('after', HELP)
    .action(
      run(async (context, action: string) => {
        if (!['get', 'store', 'erase'].includes(action)) throw new UsageError(`Unknown action "${action}".`, 'git calls the helper with get, store or erase.');
        const request = parseCredentialRequest(await readStdin());
        // store and erase: the key is the profile's, not git's to save or forget.
        if (action !== 'get') return EXIT.OK;
        const config = context.config();
        if (!config.url || !asksFor(request, checkUrl(config.url.value, config.url.source, config.profileName))) return EXIT.OK;
        checkGitKey(config);
        if (!config.token) throw new UsageError(`Profile "${config.profileName}" has no API key for ${config.url.value}.`, 'Run `mapi login` for it.');
        // git takes the first helper's answer; "mapi" only names the key's use in server logs.
        process.stdout.write(`username=mapi\npassword=${config.token.value}\n`);
        return EXIT.OK;
      }),
    );
}
