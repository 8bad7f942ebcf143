import type { Command } from 'commander';
import { ApiError, unwrap, type PromotionMissingMember, type WorkbookPromotion, type WorkbookPromotionLink } from '@mapi/client';
import { EXIT } from '../errors.js';
import { run } from '../context.js';
import { registerTextFileCommands } from './text-file.js';
import { parseFolder, parseId, parseSlug } from '../items.js';
import { note, plural, shortDate, write, writeJson, writeTable, type Column } from '../output.js';
import { coversEach } from '../operations.js';

const HELP = `
The slug is the workbook's stable name in URLs: the first put creates the workbook, later puts
with the same slug update it (its name always; its folder only when --folder is given). A
different --folder moves it, with the same checks and errors as \`mapi move\`.

Examples:
  $ mapi workbooks put 1 q3-revenue --name "Q3 revenue"
  $ mapi workbooks put 1 q3-revenue --name "Q3 revenue" --folder 12
  $ mapi workbooks put 1 q3-revenue --name "Q3 revenue" --folder root --json
`;

export function registerWorkbooks(program: Command): void {
  const workbooks = program
    .command('workbooks')
    .description('Workbooks of a deployment: create or update by slug, duplicate, promote to another deployment, their dashboard draft as text');
  workbooks.addHelpText('after', '\nExample:\n  $ mapi workbooks put 1 q3-revenue --name "Q3 revenue" --folder 12\n');

  registerTextFileCommands(
    workbooks,
    'draft-file',
    {
      idName: 'workbook',
      what: 'workbook’s dashboard draft',
      label: (id) => `the dashboard draft of workbook ${id}`,
      files: (client) => client.dashboardFiles,
    },
    '  $ mapi workbooks draft-file 1 7 > draft.json\n  $ mapi workbooks draft-file-edit 1 7 --old \'"title": "Q3"\' --new \'"title": "Q4"\'\n  $ mapi workbooks draft-file-edit 1 7 --from draft.json --hash 5f1c…\n',
  );

  workbooks
    .command('put')
    .argument('<deploymentId>', 'deployment id')
    .argument('<slug>', 'the workbook slug')
    .requiredOption('--name <name>', 'workbook name (the API sets the name on every put)')
    .option('--folder <folder>', 'containing folder id, or "root"; left out: the root for a new workbook, unchanged otherwise')
    .description('Create a workbook with this slug, or update the one that has it')
    .addHelpText('after', HELP)
    .action(
      run(async (context, deployment: string, slugArg: string, options: { name: string; folder?: string }) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const slug = parseSlug(slugArg);
        const body = {
          name: options.name,
          ...(options.folder === undefined ? {} : { folderId: parseFolder(options.folder, '--folder') }),
        };
        const answer = await context.client().PUT('/api/v1/deployments/{deploymentId}/workbooks/by-slug/{slug}', {
          params: { path: { deploymentId, slug } },
          body,
        });
        const workbook = unwrap(answer);
        if (context.json) {
          writeJson(workbook);
          return;
        }
        write(
          `${answer.response.status === 201 ? 'Created' : 'Updated'} workbook "${workbook.name}" (workbook:${workbook.id}, slug ${slug}) in ${placeOf(workbook.folderPath)}.`,
        );
      }),
    );

  workbooks
    .command('duplicate')
    .argument('<deploymentId>', 'deployment id')
    .argument('<workbookId>', 'the workbook to copy')
    .option('--folder <folder>', 'where the copy goes (EDIT needed there): a folder id or "root"; left out: beside the source, or the root')
    .option('--name <name>', 'the copy\'s name; "Copy of <name>" by default')
    .description('Copy a workbook with its reports and its published dashboard (embedding off, sharing not copied)')
    .addHelpText('after', DUPLICATE_HELP)
    .action(
      run(async (context, deployment: string, workbook: string, options: { folder?: string; name?: string }) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const workbookId = parseId(workbook, 'workbookId');
        const body = {
          ...(options.folder === undefined ? {} : { folderId: parseFolder(options.folder, '--folder') }),
          ...(options.name === undefined ? {} : { name: options.name }),
        };
        const copy = unwrap(
          await context
            .client()
            .POST('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/duplicate', { params: { path: { deploymentId, workbookId } }, body }),
        );
        if (context.json) {
          writeJson(copy);
          return;
        }
        write(`Copied workbook:${workbookId} to "${copy.name}" (workbook:${copy.id}, slug ${copy.slug}) in ${placeOf(copy.folderPath)}.`);
      }),
    );

  registerPromotion(workbooks);
  coversEach(workbooks, {
    put: ['upsertWorkbookBySlug'],
    duplicate: ['duplicateWorkbook'],
    'draft-file': ['getDashboardDraftFile'],
    'draft-file-edit': ['getDashboardDraftFile', 'editDashboardDraftFile'],
    promote: ['previewWorkbookPromotion', 'promoteWorkbook'],
    promotions: ['listWorkbookPromotions'],
    'promotion-links': ['listWorkbookPromotionLinks'],
  });
}

const MISSING_COLUMNS: Column<PromotionMissingMember>[] = [
  { header: 'MEMBER', value: (m) => m.member },
  { header: 'USED AS', value: (m) => m.use },
  { header: 'REPORTS', value: (m) => m.reportIds.join(', ') },
];

const PROMOTION_COLUMNS: Column<WorkbookPromotion>[] = [
  { header: 'ID', value: (p) => p.id, align: 'right' },
  { header: 'WHEN', value: (p) => shortDate(p.createdAt) },
  { header: 'FROM', value: (p) => `${p.sourceDeploymentId}/workbook:${p.sourceWorkbookId}` },
  { header: 'TO', value: (p) => `${p.targetDeploymentId}/workbook:${p.targetWorkbookId}` },
  { header: 'OUTCOME', value: (p) => p.outcome },
  { header: 'REPORTS', value: (p) => p.reports.length, align: 'right' },
  { header: 'BY', value: (p) => (p.createdBy === null ? null : `user:${p.createdBy}`) },
];

const LINK_COLUMNS: Column<WorkbookPromotionLink>[] = [
  { header: 'KIND', value: (l) => l.kind },
  { header: 'SOURCE', value: (l) => `${l.sourceDeploymentId}/${l.kind === 'WORKBOOK' ? `workbook:${l.sourceWorkbookId}` : `report:${l.sourceReportId}`}` },
  { header: 'COPY', value: (l) => `${l.targetDeploymentId}/${l.kind === 'WORKBOOK' ? `workbook:${l.targetWorkbookId}` : `report:${l.targetReportId}`}` },
  { header: 'LAST PROMOTION', value: (l) => l.lastPromotionId, align: 'right' },
  { header: 'UPDATED', value: (l) => shortDate(l.updatedAt) },
];

const PROMOTE_HELP = `
Copies the workbook, the reports its dashboards show, its draft and its published dashboard to
the deployment --to names, whose model must have every member the reports' queries use. Promoting
again to the same deployment updates the copy made before (through its links), never a second one.
A first promotion puts the copy at the target's root, or in --folder.

--dry-run previews: it prints what would happen and the members the target lacks, writes nothing,
and exits 1 when something is missing. --key makes a retry safe: the same key with the same
options answers the promotion it made; a fresh key is used when it is left out.

Examples:
  $ mapi workbooks promote 1 42 --to 2 --dry-run
  $ mapi workbooks promote 1 42 --to 2 --folder 12 --key release-2026-12
  $ mapi workbooks promotions 1 42
  $ mapi workbooks promotion-links 1 42 --json
`;

function registerPromotion(workbooks: Command): void {
  workbooks
    .command('promote')
    .argument('<deploymentId>', 'the deployment the workbook is in')
    .argument('<workbookId>', 'the workbook to promote')
    .requiredOption('--to <deploymentId>', 'the deployment to promote it to')
    .option('--folder <folder>', 'where a first promotion puts the copy in the target: a folder id or "root" (the default)')
    .option('--key <idempotencyKey>', 'idempotency key: the same key and options answer the same promotion')
    .option('--dry-run', 'preview only: what would happen, and the members the target lacks; writes nothing')
    .description('Promote a workbook, its reports and its dashboard to another deployment (again: update the copy)')
    .addHelpText('after', PROMOTE_HELP)
    .action(
      run(async (context, deployment: string, workbook: string, options: { to: string; folder?: string; key?: string; dryRun?: boolean }) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const workbookId = parseId(workbook, 'workbookId');
        const input = {
          targetDeploymentId: parseId(options.to, '--to'),
          ...(options.folder === undefined ? {} : { folderId: parseFolder(options.folder, '--folder') }),
        };
        const client = context.client();
        if (options.dryRun) {
          const preview = await client.workbooks.previewPromotion(deploymentId, workbookId, input);
          if (context.json) writeJson(preview);
          else {
            const what =
              preview.targetWorkbookId === null
                ? `create a copy of workbook:${workbookId} in deployment ${preview.targetDeploymentId}`
                : `update its copy workbook:${preview.targetWorkbookId} in deployment ${preview.targetDeploymentId}`;
            write(`Promoting would ${what}, with ${plural(preview.reportIds.length, 'report')}.`);
            if (preview.ready) write('Every member the reports use is in the target model.');
            else {
              write(`The target model lacks ${plural(preview.missingMembers.length, 'member')}; promoting now would be refused:`);
              writeTable(MISSING_COLUMNS, preview.missingMembers, '');
            }
          }
          return preview.ready ? EXIT.OK : EXIT.ERROR;
        }
        let promotion: WorkbookPromotion;
        try {
          promotion = await client.workbooks.promote(deploymentId, workbookId, input, options.key === undefined ? {} : { idempotencyKey: options.key });
        } catch (error) {
          // The whole list, not only the first few the message names.
          const missing = error instanceof ApiError ? (error.problem as { missingMembers?: PromotionMissingMember[] } | undefined)?.missingMembers : undefined;
          if (missing && !context.json)
            note(`Members the target model lacks:\n${missing.map((m) => `  ${m.member} (${m.use}; reports ${m.reportIds.join(', ')})`).join('\n')}`);
          throw error;
        }
        if (context.json) {
          writeJson(promotion);
          return;
        }
        const copy = `workbook:${promotion.targetWorkbookId} in deployment ${promotion.targetDeploymentId}`;
        const made = promotion.reports.filter((r) => r.outcome === 'CREATED').length;
        const done = promotion.outcome === 'CREATED' ? `Promoted workbook:${workbookId} to ${copy}` : `Promoted workbook:${workbookId} again, updating ${copy}`;
        write(
          `${done} (promotion ${promotion.id}): ${plural(made, 'report')} copied, ${promotion.reports.length - made} updated${promotion.dashboardPublished ? ', dashboard published' : ''}.`,
        );
      }),
    );

  workbooks
    .command('promotions')
    .argument('<deploymentId>', 'deployment id')
    .argument('<workbookId>', 'a workbook, promoted or a promoted copy')
    .description("A workbook's promotions, newest first")
    .addHelpText(
      'after',
      '\nCovers promotions of the workbook and, on a copy, the promotions that made or updated it.\n\nExamples:\n  $ mapi workbooks promotions 1 42\n  $ mapi workbooks promotions 2 57 --json\n',
    )
    .action(
      run(async (context, deployment: string, workbook: string) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const workbookId = parseId(workbook, 'workbookId');
        const rows: WorkbookPromotion[] = [];
        for await (const p of context.client().workbooks.promotions(deploymentId, workbookId)) rows.push(p);
        if (context.json) writeJson(rows);
        else writeTable(PROMOTION_COLUMNS, rows, `workbook:${workbookId} has not been promoted.`);
      }),
    );

  workbooks
    .command('promotion-links')
    .argument('<deploymentId>', 'deployment id')
    .argument('<workbookId>', 'a workbook, promoted or a promoted copy')
    .description('The links between a workbook and its promoted copies, one per workbook and report')
    .addHelpText(
      'after',
      '\nA promotion follows these links to update the copies instead of making new ones.\n\nExamples:\n  $ mapi workbooks promotion-links 1 42\n  $ mapi workbooks promotion-links 1 42 --json\n',
    )
    .action(
      run(async (context, deployment: string, workbook: string) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const workbookId = parseId(workbook, 'workbookId');
        const rows: WorkbookPromotionLink[] = [];
        for await (const l of context.client().workbooks.promotionLinks(deploymentId, workbookId)) rows.push(l);
        if (context.json) writeJson(rows);
        else writeTable(LINK_COLUMNS, rows, `workbook:${workbookId} has no promotion links.`);
      }),
    );
}

const DUPLICATE_HELP = `
Without --folder the copy goes beside the source when you have EDIT on its folder, otherwise to
the workspace root, which needs EDIT on the deployment; with neither the server answers 403 and
nothing is created: pass --folder with a folder where you have EDIT.

Examples:
  $ mapi workbooks duplicate 1 42
  $ mapi workbooks duplicate 1 42 --folder 12 --name "Q3 revenue (draft)" --json
`;

/** "the workspace root" or the folder path, as the server gives it. */
function placeOf(folderPath: { name: string }[] | null | undefined): string {
  const path = folderPath ?? [];
  return path.length === 0 ? 'the workspace root' : path.map((f) => f.name).join(' / ');
}
