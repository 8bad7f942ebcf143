import type { Command } from 'commander';
import { distinctRefs, formatItemRef, type BulkMoveResult } from '@mapi/client';
import { chunks, jobExitCode, jobJson, parseChunkSize, runJob, writeDryRun, writeFailuresAndPending } from '../bulk.js';
import { errorContext } from '../config.js';
import { run } from '../context.js';
import { EXIT } from '../errors.js';
import { collectItems, parseFolder, parseId } from '../items.js';
import { plural, write, writeJson, writeTable } from '../output.js';
import { coversEach } from '../operations.js';

interface MoveOptions {
  to: string;
  keepSubtrees?: boolean;
  dryRun?: boolean;
  chunkSize?: string;
}

const HELP = `
ITEM is TYPE:ID (folder:12, workbook:7, report:3), or "-" to read items from stdin: one TYPE:ID
per line, or a JSON array of {"type": "FOLDER", "id": 1} objects or "folder:1" strings.
Repeated items are sent once. Items go in requests of at most 100, in the order given; each item
is moved or fails on its own, and earlier moves stay applied when a later item fails.
With --keep-subtrees, an item inside a folder that is in the batch is not sent: it travels with
that folder, keeping the subtree's shape. If the folder fails to move, the item is sent after all.

Output: a summary and a table of failed items (TYPE:ID, status, message) on stdout; progress on
stderr (a bar on a terminal, a line per request otherwise). --json prints the result object
{moved, failed, skipped, requests} instead.

Ctrl-C stops between requests: the request in flight completes, then the summary of what was
applied is printed and the exit code is 130. A second Ctrl-C quits at once. SIGTERM (e.g. from a
job runner's timeout) does the same with exit code 143.

Exit codes: 0 all moved, 2 some items failed, 1 request-level or usage error, 130 interrupted,
143 terminated.

Examples:
  $ mapi move 1 --to 12 folder:3 workbook:7 report:9
  $ mapi move 1 --to root workbook:7
  $ mapi workspace ls 1 5 --refs | mapi move 1 --to 12 -
  $ echo '[{"type":"FOLDER","id":3},"workbook:7"]' | mapi move 1 --to 12 - --json
  $ mapi move 1 --to 12 folder:3 folder:4 --keep-subtrees --dry-run
`;

function destination(folderId: number | null): string {
  return folderId === null ? 'the workspace root' : `folder ${folderId}`;
}

/**
 * The counts are of items sent: an item in `skipped` travelled inside a folder that was moved and
 * was never sent itself, so it is neither moved nor missing. (With --keep-subtrees, an item whose
 * folder failed to move is sent on its own and counted like any other.)
 */
function writeSummary(result: BulkMoveResult, distinct: number, folderId: number | null, deploymentId: number, interrupted: boolean): void {
  const where = `to ${destination(folderId)} in deployment ${deploymentId}`;
  const requests = plural(result.requests, 'request');
  const sent = distinct - result.skipped.length;
  const carriers = new Set(result.skipped.map((s) => s.ancestorFolderId)).size;
  const travelled =
    result.skipped.length > 0
      ? `; ${result.skipped.length} more travelled inside ${carriers === 1 ? 'a moved folder' : 'moved folders'} (--keep-subtrees)`
      : '';
  if (interrupted) write(`Interrupted: moved ${result.moved.length} of ${plural(sent, 'item')} ${where} before stopping (${requests})${travelled}.`);
  else if (result.moved.length === sent) write(`Moved ${plural(sent, 'item')} ${where} (${requests})${travelled}.`);
  else write(`Moved ${result.moved.length} of ${plural(sent, 'item')} ${where} (${requests})${travelled}.`);
  if (result.skipped.length > 0) {
    write('\nNot sent themselves, as they travelled inside a moved folder:');
    writeTable(
      [
        { header: 'ITEM', value: (s) => formatItemRef(s) },
        { header: 'MOVED WITH', value: (s) => `folder:${s.ancestorFolderId}` },
      ],
      result.skipped,
      '',
    );
  }
}

export function registerMove(program: Command): void {
  program
    .command('move')
    .argument('<deploymentId>', 'deployment id')
    .argument('<items...>', 'TYPE:ID items, or "-" for a list on stdin')
    .requiredOption('--to <folder>', 'destination folder id, or "root" for the workspace root')
    .option(
      '--keep-subtrees',
      'do not send items inside a folder of the batch: they travel with it (reported as skipped), or are sent themselves if it fails to move',
    )
    .option('--dry-run', 'print the de-duplicated items, the requests and the destination; send nothing')
    .option('--chunk-size <n>', 'items per request, 1 to 100', '100')
    .description('Move folders, workbooks and reports to one folder (or the root), in bulk')
    .addHelpText('after', HELP)
    .action(
      run(async (context, deployment: string, itemArgs: string[], options: MoveOptions) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const folderId = parseFolder(options.to, '--to');
        const chunkSize = parseChunkSize(options.chunkSize);
        const items = await collectItems(itemArgs, deploymentId);
        const distinct = distinctRefs(items);

        if (options.dryRun) {
          const keepNote = options.keepSubtrees
            ? [
                '--keep-subtrees: items inside a folder of this batch would be left out (and sent after all if that folder failed to move); that needs the folder tree, which a dry run does not read.',
              ]
            : [];
          if (context.json) {
            writeJson({
              dryRun: true,
              deploymentId,
              folderId,
              keepSubtrees: options.keepSubtrees === true,
              items: distinct,
              duplicates: items.length - distinct.length,
              chunks: chunks(distinct, chunkSize),
            });
          } else {
            writeDryRun(
              (counted) => `Would move ${counted} to ${destination(folderId)} in deployment ${deploymentId}`,
              distinct,
              items.length - distinct.length,
              chunkSize,
              keepNote,
            );
          }
          return EXIT.OK;
        }

        const client = context.client();
        const outcome = await runJob(
          'moved',
          (bulk) => client.bulkMove(deploymentId, distinct, folderId, { ...bulk, ...(options.keepSubtrees ? { keepSubtrees: true } : {}) }),
          chunkSize,
        );
        const { result } = outcome;
        const nothingHappened = result.moved.length === 0 && result.failed.length === 0 && result.skipped.length === 0;
        if (context.json) writeJson(jobJson(outcome));
        else if (!(outcome.error !== undefined && nothingHappened)) {
          writeSummary(result, distinct.length, folderId, deploymentId, outcome.interrupted);
          writeFailuresAndPending(result.failed, outcome, deploymentId);
        }
        return jobExitCode(outcome, result.failed.length, errorContext(context.config()));
      }),
    );
  coversEach(program, { move: ['bulkMoveWorkspaceObjects', 'listFolders', 'listWorkspace'] });
}
