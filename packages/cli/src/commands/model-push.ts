import type { Command } from 'commander';
import { MAX_MODEL_FILE_BYTES, type Build, type MapiClient, type PushResult } from '@mapi/client';
import { run, type Context } from '../context.js';
import { EXIT, UsageError } from '../errors.js';
import { parseBranch, parseId } from '../items.js';
import { all, formatBytes, note, plural, write, writeJson } from '../output.js';
import { projectDir, readProject, type LocalFile } from '../project-files.js';
import { createUploadProgress, silentProgress, type UploadProgress } from '../upload-progress.js';

interface PushOptions {
  branch?: string;
  message?: string;
  keepRemoteFiles?: boolean;
  projectRoot?: boolean;
  wait: boolean;
}

const HELP = `
Sends the files of DIR (default: the current directory) as the whole project: hidden files and
directories (.git, .env, ...) and node_modules are left out, symbolic links are not followed.
Only files whose content differs from the branch's are sent (compared by git blob hash); the
server then commits everything in one commit, deleting the branch's files that are not in DIR
(unless --keep-remote-files), and builds that commit. The command waits for the build and prints
its result; on failure, the error and the build's log. A file may hold at most 1 MiB.

Progress goes to stderr: a bar on a terminal, otherwise a line at most every second
(\`sent 3/12 files, 4.2 KiB of 9.8 KiB\`). --json prints one object on stdout at the end.
Ctrl-C before the commit stops the push with nothing committed; while waiting for the build, it
stops waiting (the commit stays). Exit codes: 0 pushed (and built), 1 the build failed or a
request-level or usage error, 130 interrupted.

Examples:
  $ mapi model push 1
  $ mapi model push 1 ./analytics --message "Orders cube" --branch feature/orders
  $ mapi model push 1 ./analytics --keep-remote-files --no-wait
  $ mapi model push 1 ./model --project-root --json
`;

/** Ctrl-C (or SIGTERM) aborts the signal once; a second one exits at once. */
function listenForInterrupt(progress: UploadProgress) {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  const codeOf = (name: NodeJS.Signals) => (name === 'SIGTERM' ? EXIT.TERMINATED : EXIT.INTERRUPTED);
  const onSignal = (name: NodeJS.Signals) => {
    if (received) {
      progress.stop();
      process.exit(codeOf(name));
    }
    received = name;
    progress.note('Interrupted: stopping (Ctrl-C again to quit at once)...');
    controller.abort();
  };
  const onExit = () => progress.stop();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', onExit);
  return {
    signal: controller.signal,
    code: () => (received ? codeOf(received) : undefined),
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.off('exit', onExit);
    },
  };
}

/** The local project, checked before any request: nothing to push, or a file the server would refuse, is a usage error. */
async function localFiles(dir: string): Promise<LocalFile[]> {
  const root = projectDir(dir);
  const project = await readProject(root);
  if (project.skipped.length > 0)
    note(
      `note: left out ${plural(project.skipped.length, 'entry', 'entries')} that ${project.skipped.length === 1 ? 'is' : 'are'} not a file or directory (symbolic links are not followed): ${project.skipped.join(', ')}`,
    );
  if (project.files.length === 0) {
    throw new UsageError(
      `No files to push in ${dir} (hidden files and node_modules are left out).`,
      'A push sends the whole project, and an empty one would delete every file of the branch; check the directory.',
    );
  }
  const tooLarge = project.files.filter((f) => f.content.byteLength > MAX_MODEL_FILE_BYTES);
  if (tooLarge.length > 0) {
    throw new UsageError(
      `${plural(tooLarge.length, 'file')} larger than 1 MiB, the most a data-model file may hold: ${tooLarge.map((f) => `${f.path} (${formatBytes(f.content.byteLength)})`).join(', ')}.`,
      'Move large files out of the directory (or into a hidden one), then push again.',
    );
  }
  return project.files;
}

function summary(deploymentId: number, result: PushResult): string {
  const removed = result.removed.length > 0 ? `, removed ${plural(result.removed.length, 'file')} missing here (${result.removed.join(', ')})` : '';
  return [
    `Sent ${result.sent.length} of ${plural(result.files, 'file')} (${formatBytes(result.bytesSent)}) to deployment ${deploymentId} ("${result.deploymentName}"), ${result.unchanged} unchanged${removed}.`,
    `Commit ${result.lastHash ?? '(none)'}.`,
  ].join('\n');
}

function buildReport(build: Build, logs: string[]): string {
  const cubes = build.cubesCount === null ? '' : ` (${plural(build.cubesCount, 'cube')})`;
  const lines = [`Build ${build.id} of ${build.commit.slice(0, 12)} on branch ${build.branchName}: ${build.status}${build.status === 'success' ? cubes : ''}.`];
  if (build.status === 'failed') {
    if (build.errorText) lines.push(`  ${build.errorText}`);
    if (logs.length > 0) lines.push('Build log:', ...logs.map((line) => `  ${line}`));
  }
  return lines.join('\n');
}

type Interrupt = ReturnType<typeof listenForInterrupt>;

/** Sends the files; undefined when Ctrl-C stopped the push before its commit. */
async function send(
  client: MapiClient,
  deploymentId: number,
  files: LocalFile[],
  options: PushOptions,
  branchName: string | undefined,
  progress: UploadProgress,
  interrupt: Interrupt,
): Promise<PushResult | undefined> {
  try {
    return await client.dataModel.push(deploymentId, files, {
      ...(branchName !== undefined ? { branchName } : {}),
      ...(options.projectRoot ? { useDeployProjectRoot: true } : {}),
      ...(options.keepRemoteFiles ? { autoRemoveFiles: false } : {}),
      ...(options.message !== undefined ? { commitMessage: options.message } : {}),
      onProgress: (p) => progress.update(p),
      signal: interrupt.signal,
    });
  } catch (error) {
    if (interrupt.code() === undefined) throw error;
    return undefined;
  } finally {
    progress.stop();
  }
}

/** The build of the push's commit once it has finished; undefined when Ctrl-C stopped the wait. */
async function awaitBuild(
  client: MapiClient,
  deploymentId: number,
  commit: string,
  branchName: string | undefined,
  interrupt: Interrupt,
): Promise<Build | undefined> {
  try {
    return await client.builds.waitFor(deploymentId, commit, { ...(branchName !== undefined ? { branchName } : {}), signal: interrupt.signal });
  } catch (error) {
    if (interrupt.code() === undefined) throw error;
    return undefined;
  }
}

async function push(context: Context, deployment: string, dir: string, options: PushOptions): Promise<number> {
  const deploymentId = parseId(deployment, 'deploymentId');
  const branchName = parseBranch(options.branch);
  if (options.message !== undefined && options.message.trim() === '')
    throw new UsageError('--message is empty.', 'Leave it out for the server\'s message ("Upload: N files changed"), or give one.');
  const files = await localFiles(dir);
  const client: MapiClient = context.client();
  const progress = context.json ? silentProgress : createUploadProgress();
  const interrupt = listenForInterrupt(progress);
  try {
    const result = await send(client, deploymentId, files, options, branchName, progress, interrupt);
    if (result === undefined) {
      if (context.json) writeJson({ deploymentId, interrupted: true, committed: false });
      else write('Interrupted: nothing was committed.');
      return interrupt.code() ?? EXIT.INTERRUPTED;
    }
    if (!context.json) write(summary(deploymentId, result));
    const stopped = interrupt.code();
    if (!options.wait || result.lastHash === null || stopped !== undefined) {
      if (context.json) writeJson({ deploymentId, ...result, build: null, ...(stopped !== undefined ? { interrupted: true } : {}) });
      else if (stopped !== undefined) note(`Interrupted after the commit; not waiting for its build (\`mapi model status ${deploymentId}\` shows it).`);
      return stopped ?? EXIT.OK;
    }

    if (!context.json) note(`Waiting for the build of ${result.lastHash.slice(0, 12)}...`);
    const build = await awaitBuild(client, deploymentId, result.lastHash, branchName, interrupt);
    if (build === undefined) {
      if (context.json) writeJson({ deploymentId, ...result, build: null, interrupted: true });
      else note(`Stopped waiting; the commit stays and its build goes on (\`mapi model status ${deploymentId}\` shows it).`);
      return interrupt.code() ?? EXIT.INTERRUPTED;
    }
    const logs = build.status === 'failed' ? (await all(client.builds.logs(deploymentId, build.id))).map((l) => l.line) : [];
    if (context.json) writeJson({ deploymentId, ...result, build, ...(build.status === 'failed' ? { logs } : {}) });
    else write(buildReport(build, logs));
    return build.status === 'success' ? EXIT.OK : EXIT.ERROR;
  } finally {
    interrupt.dispose();
  }
}

export function registerModelPush(model: Command): void {
  model
    .command('push')
    .argument('<deploymentId>', 'deployment id')
    .argument('[dir]', 'the project directory', '.')
    .option('--branch <name>', 'the branch to write (default: your active dev-mode branch, else the deploy branch)')
    .option('-m, --message <text>', 'the commit message')
    .option('--keep-remote-files', "keep the branch's files that are not in the directory (default: they are deleted)")
    .option('--project-root', "paths are relative to the deployment's deployProjectRoot; only files below it are compared and deleted")
    .option('--no-wait', 'do not wait for the build')
    .description('Upload a project directory as one commit, sending only changed files, then wait for its build')
    .addHelpText('after', HELP)
    .action(run((context, deployment: string, dir: string, options: PushOptions) => push(context, deployment, dir, options)));
}
