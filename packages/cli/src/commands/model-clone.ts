import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { checkUrl } from '../config.js';
import { run } from '../context.js';
import { EXIT, UsageError } from '../errors.js';
import { checkGitKey, cloneConfig, repositoryUrl } from '../git-remote.js';
import { parseBranch, parseId } from '../items.js';
import { note, write, writeJson } from '../output.js';
import { shellArg } from '../shell.js';

const HELP = `
Runs \`git clone\` of the deployment's model repository (https://<server>/build/git/<id>.git) with
this CLI as git's credential helper for that URL only, and writes the same setting into the
clone's .git/config: later fetches and pushes ask the profile for its API key, which never appears
in the remote URL or in .git/config. The helper is saved as an absolute command (this node binary
and this CLI, with --profile), so it works without \`mapi\` on PATH. When the profile has a CA
certificate (--ca-cert at login), http.<url>.sslCAInfo points git at it.
A push to the deploy branch builds it, as \`mapi model push\` does (see \`mapi model status\`).
Exit codes: 0 cloned, 1 git failed (its message is shown), git is missing, or a usage error.

Examples:
  $ mapi model clone 1
  $ mapi model clone 1 ./analytics --branch feature/orders
  $ cd analytics && git commit -am "Orders cube" && git push
`;

/** Runs git with the terminal's stderr (its progress and errors), resolving with its exit code. */
function git(args: string[], extraEnv: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    // No prompt for a user name: a refused key is the helper's answer, not something to type.
    const child = spawn('git', args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, GIT_TERMINAL_PROMPT: '0', ...extraEnv } });
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new UsageError('git is not installed or not on PATH.', 'Install git 2.38 or later.') : error),
    );
    child.once('close', (code) => resolve(code ?? EXIT.ERROR));
  });
}

export function registerModelClone(model: Command): void {
  model
    .command('clone')
    .argument('<deploymentId>', 'deployment id')
    .argument('[dir]', 'directory to clone into (default: deployment-<id>)')
    .option('--branch <name>', 'the branch to check out (default: the deploy branch)')
    .description("git clone the deployment's model repository, with the profile's key given to git by a credential helper")
    .addHelpText('after', HELP)
    .action(
      run(async (context, deployment: string, dir: string | undefined, options: { branch?: string }) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const branch = parseBranch(options.branch);
        const config = context.config();
        // The token itself is the helper's to read, at each fetch; here only the URL is needed.
        context.client();
        checkGitKey(config);
        if (!config.url) return EXIT.ERROR;
        const base = checkUrl(config.url.value, config.url.source, config.profileName);
        const url = repositoryUrl(base, deploymentId);
        const target = path.resolve(dir ?? `deployment-${deploymentId}`);
        if (fs.existsSync(target) && (!fs.statSync(target).isDirectory() || fs.readdirSync(target).length > 0))
          throw new UsageError(`${target} already exists and is not an empty directory.`, 'Name a new directory as the second argument.');
        if (config.token?.source !== 'profile' || config.url.source !== 'profile')
          note(
            `warning: the clone's helper reads profile "${config.profileName}"; the ${config.token?.source === 'profile' ? 'URL' : 'token'} given here through ${config.token?.source === 'flag' || config.url.source === 'flag' ? 'flags' : 'MAPI_* variables'} applies to this clone only (and to later git commands run with the same variables).`,
          );
        const settings = cloneConfig(url, config.profileName, config.caCert?.value);
        // `clone --config` writes each setting into the new repository before fetching, so the clone
        // itself uses them; a setting given twice (the helper reset, then the helper) keeps both values.
        const args = [
          'clone',
          ...settings.flatMap(([key, value]) => ['--config', `${key}=${value}`]),
          ...(branch ? ['--branch', branch] : []),
          '--',
          url,
          target,
        ];
        // GIT_SSL_CAINFO outranks every http.*.sslCAInfo setting, so a shell that sets it (some
        // distributions' profiles do) would make git distrust the server the profile trusts.
        const caCert = config.caCert ? path.resolve(config.caCert.value) : undefined;
        const overridden = caCert !== undefined && process.env.GIT_SSL_CAINFO !== undefined && path.resolve(process.env.GIT_SSL_CAINFO) !== caCert;
        if (overridden)
          note(
            `warning: GIT_SSL_CAINFO (${process.env.GIT_SSL_CAINFO}) overrides the clone's http.sslCAInfo; this clone runs with the profile's certificate, but later git commands need \`unset GIT_SSL_CAINFO\` (or GIT_SSL_CAINFO=${shellArg(caCert)}).`,
          );
        const code = await git(args, overridden ? { GIT_SSL_CAINFO: caCert } : {});
        if (code !== 0) {
          note(`git clone of deployment ${deploymentId} failed (exit ${code}).`);
          return EXIT.ERROR;
        }
        if (context.json) writeJson({ deploymentId, url, dir: target, branch: branch ?? null, profile: config.profileName });
        else
          write(
            `Cloned deployment ${deploymentId} into ${target}. Push with \`git -C ${shellArg(target)} push\`; the key comes from profile "${config.profileName}".`,
          );
        return EXIT.OK;
      }),
    );
}
