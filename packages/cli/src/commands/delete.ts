import type { Command } from 'commander';
import { distinctRefs, type BulkDeleteResult } from '@mapi/client';
import { chunks, jobExitCode, jobJson, parseChunkSize, runJob, writeDryRun, writeFailuresAndPending } from '../bulk.js';
import { errorContext } from '../config.js';
import { run } from '../context.js';
import { EXIT, UsageError } from '../errors.js';
import { collectItems, parseId } from '../items.js';
import { plural, write, writeJson } from '../output.js';
import { canPrompt, confirm } from '../prompt.js';
import { coversEach } from '../operations.js';

interface DeleteOptions {
  dryRun?: boolean;
  yes?: boolean;
  chunkSize?: string;
}

const HELP = `
ITEM is TYPE:ID (folder:12, workbook:7, report:3), or "-" to read items from stdin: one TYPE:ID
per line, or a JSON array of {"type": "FOLDER", "id": 1} objects or "folder:1" strings.
Items are deleted in the order given, each on its own: a folder that still has subfolders is
refused (400), so list children before their parents. A deleted folder's workbooks and reports
go to the workspace root.

On a terminal, delete asks for confirmation unless --yes is given.
Output and Ctrl-C behave as for \`mapi move\`; --json prints {deleted, failed, requests}.

Exit codes: 0 all deleted, 2 some items failed, 1 request-level or usage error, 130 interrupted,
143 terminated.

Examples:
  $ mapi delete 1 workbook:7 report:9
  $ mapi delete 1 folder:13 folder:12 --yes
  $ mapi workspace ls 1 12 --refs | mapi delete 1 - --yes --json
  $ mapi delete 1 folder:12 --dry-run
`;

function writeSummary(result: BulkDeleteResult, total: number, deploymentId: number, interrupted: boolean): void {
  const requests = plural(result.requests, 'request');
  if (interrupted)
    write(`Interrupted: deleted ${result.deleted.length} of ${plural(total, 'item')} in deployment ${deploymentId} before stopping (${requests}).`);
  else if (result.deleted.length === total) write(`Deleted ${plural(total, 'item')} in deployment ${deploymentId} (${requests}).`);
  else write(`Deleted ${result.deleted.length} of ${plural(total, 'item')} in deployment ${deploymentId} (${requests}).`);
}

export function registerDelete(program: Command): void {
  program
    .command('delete')
    .argument('<deploymentId>', 'deployment id')
    .argument('<items...>', 'TYPE:ID items, or "-" for a list on stdin')
    .option('--dry-run', 'print the de-duplicated items and the requests; send nothing')
    .option('-y, --yes', 'do not ask for confirmation on a terminal')
    .option('--chunk-size <n>', 'items per request, 1 to 100', '100')
    .description('Delete folders, workbooks and reports, in bulk')
    .addHelpText('after', HELP)
    .action(
      run(async (context, deployment: string, itemArgs: string[], options: DeleteOptions) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const chunkSize = parseChunkSize(options.chunkSize);
        const items = await collectItems(itemArgs, deploymentId);
        const distinct = distinctRefs(items);

        if (options.dryRun) {
          if (context.json)
            writeJson({ dryRun: true, deploymentId, items: distinct, duplicates: items.length - distinct.length, chunks: chunks(distinct, chunkSize) });
          else writeDryRun((counted) => `Would delete ${counted} in deployment ${deploymentId}`, distinct, items.length - distinct.length, chunkSize, []);
          return EXIT.OK;
        }

        const client = context.client();
        // Only ask when someone can answer: stdin is a terminal that did not carry the item list.
        if (!options.yes && canPrompt() && !itemArgs.includes('-')) {
          if (!(await confirm(`Delete ${plural(distinct.length, 'item')} in deployment ${deploymentId}?`))) throw new UsageError('Nothing deleted.');
        }
        const outcome = await runJob('deleted', (bulk) => client.bulkDelete(deploymentId, distinct, bulk), chunkSize);
        const { result } = outcome;
        const nothingHappened = result.deleted.length === 0 && result.failed.length === 0;
        if (context.json) writeJson(jobJson(outcome));
        else if (!(outcome.error !== undefined && nothingHappened)) {
          writeSummary(result, distinct.length, deploymentId, outcome.interrupted);
          writeFailuresAndPending(result.failed, outcome, deploymentId);
        }
        return jobExitCode(outcome, result.failed.length, errorContext(context.config()));
      }),
    );
  coversEach(program, { delete: ['bulkDeleteWorkspaceObjects'] });
}
