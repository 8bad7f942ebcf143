import type { Command } from 'commander';
import { unwrap, type ExternalDocumentPlacement, type ReportPlacement } from '@mapi/client';
import { run } from '../context.js';
import { parseId } from '../items.js';
import { shortDate, write, writeJson, writeTable } from '../output.js';
import { registerTextFileCommands } from './text-file.js';
import { coversEach } from '../operations.js';

const PLACEMENTS_HELP = `
Lists where the report is placed in external spreadsheets, and whether each placement's cells
still hold the report's current query: UP_TO_DATE, CHANGED (the query changed since the cells were
written; refresh it from the spreadsheet) or UNKNOWN (recorded without a query checksum).

Examples:
  $ mapi reports placements 1 42
  $ mapi reports placements 1 42 --json
`;

const UNPLACE_HELP = `
Removes one placement of the report by its id (the ID column of \`mapi reports placements\`). The
cells in the spreadsheet stay as they are; they are no longer tied to the report. Removing a
placement that is not there succeeds and changes nothing. Read access to the report is enough.

Example:
  $ mapi reports unplace 1 42 8d0f3c2e-5b7a-4f1e-9c3d-2a6b1e0f4c77
`;

const IN_DOCUMENT_HELP = `
Lists every report placement in one external spreadsheet document, in every deployment of the
account. Placements of reports you cannot read are listed with ACCESS DENIED and no name. A
document with more than 500 placed reports or 2000 placements is refused (exit 1).

Examples:
  $ mapi reports in-document 1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms
  $ mapi reports in-document 1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms --json
`;

export function registerReports(program: Command): void {
  const reports = program.command('reports').description('Reports of a deployment: their text, their placements in external spreadsheets');
  reports.addHelpText(
    'after',
    '\nExamples:\n  $ mapi reports placements 1 42\n  $ mapi reports unplace 1 42 sheet-7\n  $ mapi reports in-document 1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms\n  $ mapi reports file 1 42 > report.json\n',
  );

  registerTextFileCommands(
    reports,
    'file',
    { idName: 'report', what: 'report', label: (id) => `report ${id}`, files: (client) => client.reportFiles },
    '  $ mapi reports file 1 42 > report.json\n  $ mapi reports file-edit 1 42 --old \'"title": null\' --new \'"title": "Revenue"\'\n  $ mapi reports file-edit 1 42 --from report.json --hash 5f1c…\n',
  );

  reports
    .command('in-document')
    .argument('<externalWorkbookId>', 'the external spreadsheet document id')
    .description('List every report placement in one spreadsheet document, across deployments')
    .addHelpText('after', IN_DOCUMENT_HELP)
    .action(
      run(async (context, documentId: string) => {
        const answer = await context.client().externalDocuments.placements(documentId);
        if (context.json) {
          writeJson(answer.items);
          return;
        }
        writeTable<ExternalDocumentPlacement>(
          [
            { header: 'DEPLOYMENT', value: (e) => String(e.deploymentId) },
            { header: 'REPORT', value: (e) => String(e.reportId) },
            { header: 'NAME', value: (e) => e.reportName ?? '(no access)' },
            { header: 'ACCESS', value: (e) => e.access },
            { header: 'LOCATION', value: (e) => e.placement.resultLocation },
            { header: 'SYNC', value: (e) => e.placement.syncStatus },
          ],
          answer.items,
          `No report is placed in document "${documentId}".`,
        );
      }),
    );

  reports
    .command('placements')
    .argument('<deploymentId>', 'deployment id')
    .argument('<reportId>', 'report id')
    .description("List the report's placements in spreadsheets, with their sync status")
    .addHelpText('after', PLACEMENTS_HELP)
    .action(
      run(async (context, deployment: string, report: string) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const reportId = parseId(report, 'reportId');
        const answer = unwrap(
          await context.client().GET('/api/v1/deployments/{deploymentId}/reports/{reportId}', { params: { path: { deploymentId, reportId } } }),
        );
        if (context.json) {
          writeJson(answer.externalWorkbookPlacements);
          return;
        }
        writeTable<ReportPlacement>(
          [
            { header: 'ID', value: (p) => p.id },
            { header: 'DOCUMENT', value: (p) => p.workbookName ?? p.workbookId },
            { header: 'LOCATION', value: (p) => p.resultLocation },
            { header: 'HOST', value: (p) => p.host },
            { header: 'SYNC', value: (p) => p.syncStatus },
            { header: 'PLACED', value: (p) => shortDate(p.placedAt) },
            { header: 'REFRESHED', value: (p) => shortDate(p.refreshedAt) },
          ],
          answer.externalWorkbookPlacements,
          `Report ${reportId} is placed in no spreadsheet.`,
        );
      }),
    );

  reports
    .command('unplace')
    .argument('<deploymentId>', 'deployment id')
    .argument('<reportId>', 'report id')
    .argument('<placementId>', 'the placement id')
    .description('Remove one placement of the report')
    .addHelpText('after', UNPLACE_HELP)
    .action(
      run(async (context, deployment: string, report: string, placementId: string) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const reportId = parseId(report, 'reportId');
        const answer = await context.client().reportPlacements.disconnect(deploymentId, reportId, { placementId });
        if (context.json) {
          writeJson(answer);
          return;
        }
        const left = answer.externalWorkbookPlacements.length;
        write(`Placement "${placementId}" of report ${reportId} is gone; ${left} placement${left === 1 ? '' : 's'} left.`);
      }),
    );
  coversEach(reports, {
    'in-document': ['listExternalDocumentPlacements'],
    placements: ['getReport'],
    unplace: ['disconnectReportFromWorkbook'],
    file: ['getReportFile'],
    'file-edit': ['getReportFile', 'editReportFile'],
  });
}
