import fs from 'node:fs';
import type { Command } from 'commander';
import type { DbtSyncLogEntry, DbtSyncStatus, MapiClient, StartDbtSyncInput } from '@mapi/client';
import { run } from '../context.js';
import { EXIT, UsageError } from '../errors.js';
import { parseId } from '../items.js';
import { note, write, writeJson } from '../output.js';
import { createSyncProgress } from '../sync-progress.js';
import { coversEach } from '../operations.js';

const HELP = `
A sync turns a dbt project's compiled manifest into cubes: one YAML file per model under the
output folder (model/cubes/dbt/ by default), committed to a new branch for review. Without
--manifest it reads the manifest committed in the deployment's repository (target/manifest.json
at the saved ref, else the deploy branch); it never runs dbt. \`start\` and \`status --follow\`
show the sync's stage until it ends, and exit 1 when it failed or was cancelled.

Examples:
  $ mapi dbt-sync start 3
  $ mapi dbt-sync start 3 --manifest target/manifest.json --files --json
  $ mapi dbt-sync status 3 5f0c… --follow
  $ mapi dbt-sync logs 3 5f0c…
  $ mapi dbt-sync cancel 3 5f0c…
`;

interface StartOptions {
  manifest?: string;
  ref?: string;
  branch?: string;
  files?: boolean;
  wait?: boolean;
}

/** The body of a start: the manifest file's JSON when one is named (source manifest), else a git sync. */
export function startInput(options: StartOptions): StartDbtSyncInput {
  const input: StartDbtSyncInput = {};
  if (options.manifest !== undefined) {
    let text: string;
    try {
      text = fs.readFileSync(options.manifest, 'utf8');
    } catch (error) {
      throw new UsageError(`--manifest ${options.manifest} cannot be read: ${(error as Error).message}`);
    }
    try {
      input.manifest = JSON.parse(text) as Record<string, unknown>;
    } catch (error) {
      throw new UsageError(
        `--manifest ${options.manifest} is not JSON: ${(error as Error).message}`,
        'Give the target/manifest.json that `dbt compile` writes.',
      );
    }
    input.source = 'manifest';
  }
  if (options.ref !== undefined) input.ref = options.ref;
  if (options.branch !== undefined) input.branchName = options.branch;
  if (options.files) input.output = 'files';
  return input;
}

/** One log entry as printed: time, level, phase and message, and how long a phase took. */
export function formatEntry(entry: DbtSyncLogEntry): string {
  const phase = entry.phase ? ` [${entry.phase}]` : '';
  const took = entry.durationMs != null ? ` (${entry.durationMs} ms)` : '';
  return `${entry.timestamp} ${entry.level.padEnd(5)}${phase} ${entry.message}${took}`;
}

/** Follows a sync to its end with a progress display; the exit code says how it ended. */
async function follow(client: MapiClient, deploymentId: number, syncJobId: string, json: boolean, filesFollow = false): Promise<number> {
  const progress = createSyncProgress();
  let status: DbtSyncStatus;
  try {
    status = await client.dbtSync.waitFor(deploymentId, syncJobId, { onUpdate: (s) => progress.update(s) });
  } finally {
    progress.stop();
  }
  if (status.status === 'FAILED') {
    if (json) writeJson(status);
    note(
      status.error === 'cancelled'
        ? `Sync ${syncJobId} was cancelled; no branch was changed.`
        : `Sync ${syncJobId} failed: ${status.error ?? 'no reason given'}`,
    );
    return EXIT.ERROR;
  }
  const result = await client.dbtSync.result(deploymentId, syncJobId);
  if (json) writeJson(result);
  // With --files, stdout is for the files; the summary goes beside the progress.
  else
    (filesFollow ? note : write)(
      `Sync ${syncJobId} completed in ${result.durationMs} ms: ${result.cubeCount} cubes from ${result.manifestStats.models} models.`,
    );
  return EXIT.OK;
}

export function registerDbtSync(program: Command): void {
  const sync = program.command('dbt-sync').description('Generate cubes from a dbt project: start, follow, read the log, cancel').addHelpText('after', HELP);

  sync
    .command('start')
    .argument('<deploymentId>', 'deployment id')
    .option('--manifest <file>', 'send this manifest.json (source manifest) instead of reading the committed one')
    .option('--ref <ref>', 'the branch or tag the committed manifest is read at (not a commit SHA)')
    .option('--branch <name>', 'the new branch to write to (default dbt-sync/<ref>-<time>-<hex>)')
    .option('--files', 'commit nothing; print the generated files instead')
    .option('--no-wait', 'print the sync id and return at once')
    .description('Start a sync and follow it until it ends')
    .addHelpText(
      'after',
      '\nThe stage shows on stderr until the sync ends; the summary (or, with --files, the files) on stdout.\n\nExamples:\n  $ mapi dbt-sync start 3\n  $ mapi dbt-sync start 3 --ref release --branch review/dbt\n  $ mapi dbt-sync start 3 --manifest target/manifest.json --files\n',
    )
    .action(
      run(async (context, deploymentArg: string, options: StartOptions) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const input = startInput(options);
        const client = context.client();
        const started = await client.dbtSync.start(deploymentId, input);
        if (options.wait === false) {
          if (context.json) writeJson(started);
          else write(`Sync ${started.syncJobId} started; it writes to ${started.branchName}.`);
          return EXIT.OK;
        }
        note(`Sync ${started.syncJobId} started${input.output === 'files' ? '' : `; it writes to ${started.branchName}`}.`);
        const code = await follow(client, deploymentId, started.syncJobId, context.json && !options.files, options.files === true);
        if (code !== EXIT.OK || !options.files) return code;
        const files: Array<{ path: string; content: string }> = [];
        for await (const file of client.dbtSync.generatedFiles(deploymentId, started.syncJobId)) files.push(file);
        if (context.json) writeJson(files);
        else for (const file of files) write(`--- ${file.path}\n${file.content}`);
        return EXIT.OK;
      }),
    );

  sync
    .command('status')
    .argument('<deploymentId>', 'deployment id')
    .argument('<syncJobId>', 'the sync id start printed')
    .option('--follow', 'follow the sync until it ends')
    .description("A sync's stage and progress")
    .addHelpText(
      'after',
      '\nOnly COMPLETED and FAILED are final; a cancelled sync is FAILED: cancelled.\n\nExamples:\n  $ mapi dbt-sync status 3 5f0c2a4e-…\n  $ mapi dbt-sync status 3 5f0c2a4e-… --follow\n',
    )
    .action(
      run(async (context, deploymentArg: string, syncJobId: string, options: { follow?: boolean }) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const client = context.client();
        if (options.follow) return follow(client, deploymentId, syncJobId, context.json);
        const status = await client.dbtSync.status(deploymentId, syncJobId);
        if (context.json) writeJson(status);
        else
          write(
            `${status.status} ${status.progress.percentComplete}%${status.error ? `: ${status.error}` : status.progress.message ? ` ${status.progress.message}` : ''}`,
          );
        return EXIT.OK;
      }),
    );

  sync
    .command('logs')
    .argument('<deploymentId>', 'deployment id')
    .argument('<syncJobId>', 'the sync id start printed')
    .description("A sync's log, oldest first")
    .addHelpText(
      'after',
      '\nEach line: time, level, [phase], message, and how long a phase took.\n\nExamples:\n  $ mapi dbt-sync logs 3 5f0c2a4e-…\n  $ mapi dbt-sync logs 3 5f0c2a4e-… --json | jq -r .message\n',
    )
    .action(
      run(async (context, deploymentArg: string, syncJobId: string) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        for await (const entry of context.client().dbtSync.logs(deploymentId, syncJobId)) write(context.json ? JSON.stringify(entry) : formatEntry(entry));
      }),
    );

  sync
    .command('cancel')
    .argument('<deploymentId>', 'deployment id')
    .argument('<syncJobId>', 'the sync id start printed')
    .description('Cancel a running sync: it stops before its next stage and changes no branch')
    .addHelpText('after', '\nExamples:\n  $ mapi dbt-sync cancel 3 5f0c2a4e-…\n')
    .action(
      run(async (context, deploymentArg: string, syncJobId: string) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const answer = await context.client().dbtSync.cancel(deploymentId, syncJobId);
        if (context.json) writeJson(answer);
        else write(answer.message);
      }),
    );
  coversEach(sync, {
    start: ['startDbtSync', 'getDbtSyncStatus', 'getDbtSyncResult', 'getDbtSyncGeneratedFiles'],
    status: ['getDbtSyncStatus', 'getDbtSyncResult'],
    logs: ['getDbtSyncLogs'],
    cancel: ['cancelDbtSync'],
  });
}
