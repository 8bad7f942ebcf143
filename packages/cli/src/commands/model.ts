import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { blobHash, unwrap, type BuildStatus, type DataModelValidationError } from '@mapi/client';
import { run } from '../context.js';
import { EXIT, UsageError } from '../errors.js';
import { parseBranch, parseId } from '../items.js';
import { note, plural, shortDate, write, writeJson, writeTable, type Column } from '../output.js';
import { writeProject } from '../project-files.js';
import { registerModelClone } from './model-clone.js';
import { registerModelPush } from './model-push.js';
import { coversEach } from '../operations.js';

const HELP = `
A deployment's data model lives in its git repository; these commands read and write it through
the build API. Without --branch, pull and push use your active dev-mode branch if you have one,
else the deploy branch; validate and status use the deploy branch.

Examples:
  $ mapi model pull 1 ./analytics
  $ mapi model push 1 ./analytics --message "Orders cube"
  $ mapi model validate 1
  $ mapi model status 1
`;

/** "model/cubes/orders.yml:6:15 message", leaving out the parts the validator did not know. */
export function errorLine(error: DataModelValidationError): string {
  let where = error.fileName ?? '';
  if (where && error.line !== undefined) {
    where += `:${error.line}`;
    if (error.column !== undefined) where += `:${error.column}`;
  }
  return where ? `${where} ${error.message}` : error.message;
}

const STATUS_COLUMNS: Column<BuildStatus>[] = [
  { header: 'BRANCH', value: (s) => s.branchName },
  { header: 'MODE', value: (s) => s.mode },
  { header: 'STATUS', value: (s) => s.status },
  { header: 'BUILD', value: (s) => s.buildJobId, align: 'right' },
  { header: 'COMMIT', value: (s) => s.lastHash?.slice(0, 12) },
  { header: 'UPDATED', value: (s) => shortDate(s.updatedAt) },
  { header: 'ERROR', value: (s) => s.errorText },
];

export function registerModel(program: Command): void {
  const model = program.command('model').description('Data model files: pull, push (with a build), validate, build status');
  model.addHelpText('after', HELP);

  model
    .command('pull')
    .argument('<deploymentId>', 'deployment id')
    .argument('[dir]', 'directory to write the files into (created if missing)', '.')
    .option('--branch <name>', 'the branch to read (default: your active dev-mode branch, else the deploy branch)')
    .description('Write every file of a branch into a directory, creating subdirectories; files not on the branch are left alone')
    .addHelpText('after', '\nExamples:\n  $ mapi model pull 1 ./analytics\n  $ mapi model pull 1 . --branch feature/orders\n')
    .action(
      run(async (context, deployment: string, dir: string, options: { branch?: string }) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const branchName = parseBranch(options.branch);
        const root = path.resolve(dir);
        if (fs.existsSync(root) && !fs.statSync(root).isDirectory()) throw new UsageError(`${dir} is not a directory.`);
        const files = await context.client().dataModel.files(deploymentId, { withContent: true, ...(branchName !== undefined ? { branchName } : {}) });
        fs.mkdirSync(root, { recursive: true });
        const written = files.map((f) => ({ path: f.path, content: f.content ?? '' }));
        await writeProject(root, written);
        // The tree carries text: a file that is not UTF-8 comes back changed, which its hash shows.
        const altered: string[] = [];
        for (const [i, file] of files.entries()) if ((await blobHash(written[i]?.content ?? '')) !== file.hash) altered.push(file.path);
        if (context.json) {
          writeJson({
            deploymentId,
            branchName: branchName ?? null,
            dir: root,
            files: files.map(({ path: p, size, hash }) => ({ path: p, size, hash })),
            notUtf8: altered,
          });
          return;
        }
        const from = `deployment ${deploymentId}${branchName !== undefined ? `, branch ${branchName}` : ''}`;
        write(`Wrote ${plural(files.length, 'file')} from ${from} to ${dir}.`);
        if (altered.length > 0)
          note(`warning: ${plural(altered.length, 'file')} not UTF-8 text, written as the server shows them (not byte for byte): ${altered.join(', ')}`);
      }),
    );

  registerModelPush(model);
  registerModelClone(model);

  model
    .command('validate')
    .argument('<deploymentId>', 'deployment id')
    .option('--branch <name>', 'the branch to validate (default: the deploy branch)')
    .option('--dev-mode', 'validate your active dev-mode branch, with its pending changes')
    .description('Validate the data model of a branch; prints each error as file:line:col message. Exit code 1 when the model is invalid')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi model validate 1\n  $ mapi model validate 1 --branch feature/orders\n  $ mapi model validate 1 --dev-mode --json\n',
    )
    .action(
      run(async (context, deployment: string, options: { branch?: string; devMode?: boolean }) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const branchName = parseBranch(options.branch);
        if (branchName !== undefined && options.devMode) throw new UsageError('Give --branch or --dev-mode, not both.');
        const query = { ...(branchName !== undefined ? { branchName } : {}), ...(options.devMode ? { devMode: true } : {}) };
        const result = unwrap(
          await context.client().GET('/build/api/v1/deployments/{deploymentId}/data-model/validate', { params: { path: { deploymentId }, query } }),
        );
        if (context.json) writeJson(result);
        else {
          const lines = result.errors.map(errorLine);
          const where = `the data model of branch ${result.branchName} (deployment ${deploymentId})`;
          lines.push(
            result.valid ? `Valid: ${plural(result.cubesCount ?? 0, 'cube')} in ${where}.` : `Invalid: ${plural(result.errors.length, 'error')} in ${where}.`,
          );
          write(lines.join('\n'));
        }
        return result.valid ? EXIT.OK : EXIT.ERROR;
      }),
    );

  model
    .command('status')
    .argument('<deploymentId>', 'deployment id')
    .option('--branch <name>', 'the branch whose latest build to show (default: the deploy branch)')
    .description("The latest build of a branch: status, build id, commit, error (the command's exit code does not depend on the build)")
    .addHelpText('after', '\nExamples:\n  $ mapi model status 1\n  $ mapi model status 1 --branch feature/orders --json\n')
    .action(
      run(async (context, deployment: string, options: { branch?: string }) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const branchName = parseBranch(options.branch);
        const query = branchName !== undefined ? { branchName } : {};
        const status = unwrap(await context.client().GET('/api/v1/deployments/{deploymentId}/build-status', { params: { path: { deploymentId }, query } }));
        if (context.json) writeJson(status);
        else writeTable(STATUS_COLUMNS, [status], '');
      }),
    );
  coversEach(model, {
    pull: ['listDataModelFiles'],
    push: ['getDataModelFileHashes', 'startUpload', 'uploadFile', 'finishUpload', 'listBuilds', 'getBuild', 'getBuildLogs'],
    validate: ['validateDataModel'],
    status: ['getBuildStatus'],
  });
}
