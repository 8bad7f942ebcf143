import type { Command } from 'commander';
import type { ConnectGitHostInput, GitHostBranch, GitHostInstallation, GitHostRepository } from '@mapi/client';
import { run } from '../context.js';
import { UsageError } from '../errors.js';
import { parseId } from '../items.js';
import { shellArg } from '../shell.js';
import { all, note, write, writeJson, writeTable, type Column } from '../output.js';
import { coversEach } from '../operations.js';

const HELP = `
A deployment's model can live in a repository on the account's git host (a GitHub-App-style app
an admin sets up on the server). First link your own account on the host: \`status\` prints a URL
to open in a browser (single use, valid 10 minutes). Your linked account decides which
installations, repositories and branches you see and may connect. Once connected, shared branches
are pulled from the repository with \`pull\`, and every commit, merge and new branch goes to the
repository before it lands on the server.

Examples:
  $ mapi git-host status
  $ mapi git-host installations
  $ mapi git-host repositories 101
  $ mapi git-host branches acme/models --installation 101
  $ mapi git-host connect 3 101 models --branch main
  $ mapi git-host pull 3 main
`;

const INSTALLATION_COLUMNS: Column<GitHostInstallation>[] = [
  { header: 'ID', value: (i) => i.installationId, align: 'right' },
  { header: 'ACCOUNT', value: (i) => i.login },
];

const REPOSITORY_COLUMNS: Column<GitHostRepository>[] = [
  { header: 'ID', value: (r) => r.id, align: 'right' },
  { header: 'NAME', value: (r) => r.name },
  { header: 'URL', value: (r) => r.htmlUrl },
];

const BRANCH_COLUMNS: Column<GitHostBranch>[] = [
  { header: 'NAME', value: (b) => b.name },
  { header: 'DEFAULT', value: (b) => (b.isDefault ? 'yes' : '') },
];

/** Names as the server takes them, checked here so a typo fails before any request. */
const NAME = /^[A-Za-z0-9._-]{1,100}$/;

/** `owner/repo`, as the host writes a repository's full name. */
export function parseRepository(value: string): { owner: string; repo: string } {
  const [owner, repo, ...rest] = value.split('/');
  if (owner === undefined || repo === undefined || rest.length > 0 || !NAME.test(owner) || !NAME.test(repo)) {
    throw new UsageError(
      `"${value}" is not a repository: give owner/name, e.g. acme/models.`,
      '`mapi git-host repositories <installationId>` lists the repositories and their names.',
    );
  }
  return { owner, repo };
}

interface ConnectOptions {
  branch?: string;
  root?: string;
  new?: boolean;
  public?: boolean;
}

/** The body of a connect; the repository is named without its owner (the installation's account). */
export function connectInput(installationArg: string, name: string, options: ConnectOptions): ConnectGitHostInput {
  const installationId = parseId(installationArg, 'installationId');
  if (name.includes('/')) {
    throw new UsageError(
      `give the repository's name without its owner, got "${name}".`,
      "The owner is the installation's account: `mapi git-host installations` shows it.",
    );
  }
  if (!NAME.test(name)) throw new UsageError(`"${name}" is not a repository name: letters, digits, ".", "_" and "-", at most 100.`);
  if (options.public && !options.new) throw new UsageError('--public applies only with --new: an existing repository keeps its visibility.');
  const input: ConnectGitHostInput = { installationId, name };
  if (options.branch !== undefined) input.deployBranchName = options.branch;
  if (options.root !== undefined) input.deployProjectRoot = options.root;
  if (options.new) {
    input.isNewRepo = true;
    input.private = !options.public;
  }
  return input;
}

export function registerGitHost(program: Command): void {
  const group = program.command('git-host').description('Link your git-host account and connect deployments to its repositories').addHelpText('after', HELP);

  group
    .command('status')
    .description('Whether your git-host account is linked, and the URL to link it')
    .addHelpText(
      'after',
      '\nPrints a fresh link URL every time (each is single use and valid 10 minutes): open it in a browser\nand authorize the app. Also prints where the app is installed on an organisation or account.\n\nExamples:\n  $ mapi git-host status\n  $ mapi git-host status --json | jq -r .linkUrl\n',
    )
    .action(
      run(async (context) => {
        const status = await context.client().gitHost.status();
        if (context.json) {
          writeJson(status);
          return;
        }
        if (status.linkUrl === '') {
          // 5.19 answers not connected with no URLs while the account has no git-host app.
          write('Your git-host account is not linked, and this account has no git-host app to link it to yet.');
          write('An admin sets one with PUT /api/v1/tenant/git-host-app (see docs/api/git-host.md).');
          return;
        }
        if (status.connected) {
          write('Your git-host account is linked.');
          write(`To link another account instead, open (within 10 minutes):\n  ${status.linkUrl}`);
        } else {
          write('Your git-host account is not linked.');
          write(`To link it, open this URL in a browser within 10 minutes and authorize the app:\n  ${status.linkUrl}`);
        }
        write(`To install the app on an organisation or account:\n  ${status.settingsUrl}`);
      }),
    );

  group
    .command('unlink')
    .description('Unlink your git-host account (connected deployments stay connected)')
    .addHelpText(
      'after',
      "\nThe token is revoked at the host when it can be, and forgotten on the server in any case.\nDeployments you connected keep pulling and pushing: git runs with the app's installation tokens.\n\nExamples:\n  $ mapi git-host unlink\n",
    )
    .action(
      run(async (context) => {
        await context.client().gitHost.unlink();
        if (context.json) writeJson({ unlinked: true });
        else write('Your git-host account is unlinked.');
      }),
    );

  group
    .command('installations')
    .description("The app's installations your linked account reaches")
    .addHelpText(
      'after',
      '\nThe ID is what `repositories`, `branches` and `connect` take.\n\nExamples:\n  $ mapi git-host installations\n  $ mapi git-host installations --json\n',
    )
    .action(
      run(async (context) => {
        const rows = await all(context.client().gitHost.installations());
        if (context.json) writeJson(rows);
        else writeTable(INSTALLATION_COLUMNS, rows, 'No installations: install the app on an organisation or account (`mapi git-host status` prints where).');
      }),
    );

  group
    .command('repositories')
    .alias('repos')
    .argument('<installationId>', 'installation id, from `mapi git-host installations`')
    .description("An installation's repositories your linked account reaches")
    .addHelpText('after', '\nExamples:\n  $ mapi git-host repositories 101\n  $ mapi git-host repos 101 --json\n')
    .action(
      run(async (context, installationArg: string) => {
        const installationId = parseId(installationArg, 'installationId');
        const rows = await all(context.client().gitHost.repositories(installationId));
        if (context.json) writeJson(rows);
        else writeTable(REPOSITORY_COLUMNS, rows, 'No repositories in this installation that your account reaches.');
      }),
    );

  group
    .command('branches')
    .argument('<owner/repo>', 'the repository, e.g. acme/models')
    .requiredOption('--installation <id>', 'the installation the repository belongs to')
    .description("A repository's branches, the default one marked")
    .addHelpText('after', '\nExamples:\n  $ mapi git-host branches acme/models --installation 101\n')
    .action(
      run(async (context, repositoryArg: string, options: { installation: string }) => {
        const { owner, repo } = parseRepository(repositoryArg);
        const installationId = parseId(options.installation, '--installation');
        const rows = await all(context.client().gitHost.branches(owner, repo, installationId));
        if (context.json) writeJson(rows);
        else writeTable(BRANCH_COLUMNS, rows, 'The repository has no branches yet.');
      }),
    );

  group
    .command('connect')
    .argument('<deploymentId>', 'deployment id')
    .argument('<installationId>', 'installation id, from `mapi git-host installations`')
    .argument('<repo>', "the repository's name (without its owner, the installation's account)")
    .option('--branch <name>', "the repository's branch to deploy (default: its default branch)")
    .option('--root <dir>', "the project root in the repository (default: the deployment's current one)")
    .option('--new', "create the repository (empty) and put the deployment's model in it")
    .option('--public', 'with --new: make the new repository public (default private)')
    .description('Connect a deployment to a repository and build it')
    .addHelpText(
      'after',
      "\nThe repository's branch becomes the deployment's deploy branch and production builds from it;\nwhat the deploy branch held before is kept on the server, not lost. Your linked account must\nreach the installation and the repository. Connecting again replaces the connection.\n\nExamples:\n  $ mapi git-host connect 3 101 models\n  $ mapi git-host connect 3 101 models --branch release --root analytics\n  $ mapi git-host connect 3 101 new-models --new\n",
    )
    .action(
      run(async (context, deploymentArg: string, installationArg: string, name: string, options: ConnectOptions) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const input = connectInput(installationArg, name, options);
        const deployment = await context.client().gitHost.connect(deploymentId, input);
        if (context.json) {
          writeJson(deployment);
          return;
        }
        const what = options.new ? `the new ${options.public ? 'public' : 'private'} repository ${name}` : `repository ${name}`;
        const branch = options.branch === undefined ? "the repository's default branch" : `branch ${options.branch}`;
        write(
          `Deployment ${deployment.id} (${deployment.name}) is connected to ${what} of installation ${input.installationId}; production builds from ${branch}.`,
        );
        note(`Pull new commits with \`mapi git-host pull ${deployment.id} <branch>\`.`);
      }),
    );

  group
    .command('pull')
    .argument('<deploymentId>', 'deployment id')
    .argument('<branch>', 'the branch to fetch from the connected repository')
    .description('Fetch a branch from the connected repository; build when it changed')
    .addHelpText(
      'after',
      '\nNew commits there fast-forward the branch; when both sides have commits they are merged, and the\nmerge goes to the repository first. A build starts only when the branch moved (production for\nthe deploy branch). With no repository connected nothing is fetched.\n\nExamples:\n  $ mapi git-host pull 3 main\n  $ mapi git-host pull 3 feature/orders --json\n',
    )
    .action(
      run(async (context, deploymentArg: string, branch: string) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const result = await context.client().gitHost.pull(deploymentId, branch);
        if (context.json) writeJson(result);
        else if (result.buildTriggered)
          write(`Pulled ${branch}: it moved, and a build started (\`mapi model status ${deploymentId} --branch ${shellArg(branch)}\` follows it).`);
        else write(`Pulled ${branch}: nothing new (or no repository is connected); no build started.`);
      }),
    );
  coversEach(group, {
    status: ['getGitHostStatus'],
    unlink: ['unlinkGitHost'],
    installations: ['listGitHostInstallations'],
    repositories: ['listGitHostRepositories'],
    branches: ['listGitHostBranches'],
    connect: ['connectGitHost'],
    pull: ['pullBranch'],
  });
}
