import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { pageRequest } from '../../shared/pagination.js';
import { IdempotencyHeaders, PromotionBody, PromotionListQuery, WorkbookParams } from './promotions.schemas.js';
import type { PromotionsService } from './promotions.service.js';

const tags = ['Workbooks'];
const base = '/api/v1/deployments/:deploymentId/workbooks/:workbookId';

const PLAN =
  'Needs VIEW on the workbook and on every report its draft or published dashboard shows; in the target deployment, EDIT on the copy an earlier promotion made, or for a first promotion the EXPLORER role or above and EDIT where the copy lands (`folderId`, else the target’s root). An API key scoped to some deployments must include the target. ' +
  'The members the reports’ semantic queries use (measures, dimensions, segments, time dimensions, filtered members) are checked against the model of the target’s newest successful build of its deploy branch; a report written in SQL is not checked.';
const READ = 'Needs VIEW on the workbook. Covers promotions of the workbook (as source) and to it (as the copy).';
const COMMON = ['DEPLOYMENT_NOT_FOUND', 'WORKBOOK_NOT_FOUND', 'FORBIDDEN'] as const;
const PLANNING = [...COMMON, 'REPORT_NOT_FOUND', 'FOLDER_NOT_FOUND', 'INVALID_OPERATION', 'KEY_SCOPE_FORBIDDEN'] as const;

/** Workbook promotion across deployments (reference 9: names only; the shapes are this product's). */
export function promotionsRoutes(service: PromotionsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      `${base}/promotion-previews`,
      {
        schema: {
          operationId: 'previewWorkbookPromotion',
          extension: true,
          tags,
          summary: 'Extension: preview promoting a workbook to another deployment (writes nothing)',
          description: `${PLAN} Answers 200 with what a promotion would do now and the members the target’s model lacks (empty: it would succeed); refused access is the same 4xx the promotion answers.`,
          params: WorkbookParams,
          body: PromotionBody,
          response: { 200: Type.Ref('WorkbookPromotionPreview') },
          problems: [...PLANNING],
        },
      },
      async (request) => service.preview(request.caller, request.params.deploymentId, request.params.workbookId, request.body),
    );

    app.post(
      `${base}/promotions`,
      {
        schema: {
          operationId: 'promoteWorkbook',
          extension: true,
          tags,
          summary: 'Extension: promote a workbook, its reports and its dashboard to another deployment',
          description:
            `${PLAN} ` +
            'A first promotion copies the workbook (same name; its slug, or `<slug>-2`… when taken), the reports its dashboards show, its draft and its published dashboard (a new dashboard, `allowEmbed` off), re-pointed at the report copies, and links each source item to its copy. ' +
            'Promoting again to the same deployment updates that copy through the links instead of making a second one: its name, meta, calculated fields and draft, the linked reports (new ones copied), and the published dashboard published again as its next version. ' +
            'Answers 201 with the promotion. 422 PROMOTION_MEMBERS_MISSING lists the missing members (`missingMembers`); nothing is written. ' +
            'With an `Idempotency-Key`, the same key and body answer the same promotion again (201, `Idempotent-Replayed: true`) and write nothing; the same key with another body is 422 IDEMPOTENCY_KEY_REUSED.',
          params: WorkbookParams,
          headers: IdempotencyHeaders,
          body: PromotionBody,
          response: { 201: Type.Ref('WorkbookPromotion') },
          problems: [...PLANNING, 'PROMOTION_MEMBERS_MISSING', 'IDEMPOTENCY_KEY_REUSED', 'WORKBOOK_SLUG_TAKEN', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request, reply) => {
        const { promotion, replayed } = await service.promote(
          request.caller,
          request.params.deploymentId,
          request.params.workbookId,
          request.body,
          request.headers['idempotency-key'],
        );
        if (replayed) reply.header('idempotent-replayed', 'true');
        return reply.code(201).send(promotion);
      },
    );

    app.get(
      `${base}/promotion`,
      {
        schema: {
          operationId: 'getWorkbookPromotion',
          extension: true,
          tags,
          summary: 'Extension: the newest promotion of a workbook',
          description: `${READ} 404 PROMOTION_NOT_FOUND when there is none.`,
          params: WorkbookParams,
          response: { 200: Type.Ref('WorkbookPromotion') },
          problems: [...COMMON, 'PROMOTION_NOT_FOUND'],
        },
      },
      async (request) => service.current(request.caller, request.params.deploymentId, request.params.workbookId),
    );

    app.get(
      `${base}/promotions`,
      {
        schema: {
          operationId: 'listWorkbookPromotions',
          extension: true,
          tags,
          summary: 'Extension: the promotions of a workbook, newest first',
          description: READ,
          params: WorkbookParams,
          querystring: PromotionListQuery,
          response: { 200: Type.Ref('WorkbookPromotionPage') },
          problems: [...COMMON, 'INVALID_CURSOR'],
        },
      },
      async (request) => service.list(request.caller, request.params.deploymentId, request.params.workbookId, pageRequest(request.query)),
    );

    app.get(
      `${base}/promotion-links`,
      {
        schema: {
          operationId: 'listWorkbookPromotionLinks',
          extension: true,
          tags,
          summary: 'Extension: the links between a workbook and its promoted copies, oldest first',
          description:
            'Needs VIEW on the workbook. One link per promoted item: the workbook’s own (`kind` WORKBOOK) and one per report (`kind` REPORT), from the source in this deployment to its copy in the target, or, on a copy, from the workbook it was promoted from. A link goes when its copy or either workbook is deleted; the next promotion then makes a new copy. A report link stays when its source report is deleted (the report is still promoted from the published snapshot).',
          params: WorkbookParams,
          querystring: PromotionListQuery,
          response: { 200: Type.Ref('WorkbookPromotionLinkPage') },
          problems: [...COMMON, 'INVALID_CURSOR'],
        },
      },
      async (request) => service.links(request.caller, request.params.deploymentId, request.params.workbookId, pageRequest(request.query)),
    );
  };
}
