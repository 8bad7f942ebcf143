import { Type, type Static } from 'typebox';
import { Id, Nullable, PageOf, PageQuery, Timestamp, WorkbookParams } from '../../shared/schemas.js';

/*
 * Workbook promotion across deployments. The reference names the routes (section 9) and says a
 * promotion takes an idempotency key; the shapes are this product's, in the style of the
 * duplicate (8.G.1) and the other workbook operations (docs/api/workbook-promotion.md).
 */

export { WorkbookParams };

export const PromotionBody = Type.Object(
  {
    targetDeploymentId: { ...Id, description: 'The deployment the workbook is promoted to; another deployment of the account.' },
    folderId: Type.Optional({
      ...Nullable(Id),
      description:
        'Folder of the target deployment where a first promotion puts the copy (needs EDIT there); null or absent: the target’s workspace root (needs EDIT on the deployment). A promotion that updates an earlier copy leaves it where it is.',
    }),
  },
  { additionalProperties: false },
);
export type PromotionInput = Static<typeof PromotionBody>;

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7e]+$',
      description:
        'Makes the promotion safe to retry: the same key with the same body, on the same workbook, answers the promotion it made (with `Idempotent-Replayed: true`); with another body it is 422 IDEMPOTENCY_KEY_REUSED. 1 to 255 printable ASCII characters.',
    }),
  ),
});

const MemberUse = Type.Union(
  ['measure', 'dimension', 'segment', 'timeDimension', 'member'].map((v) => Type.Literal(v)),
  { description: 'How the reports use it: in `measures`, `dimensions`, `segments`, `timeDimensions`, or `member` (in a filter: any kind).' },
);

export const MissingMemberSchema = Type.Object(
  {
    member: Type.String({ description: '`cube.member` or `view.member`, as the reports name it.' }),
    use: MemberUse,
    reportIds: Type.Array(Id, { description: 'The source reports whose query uses it.' }),
  },
  { $id: 'PromotionMissingMember', description: 'A member the source reports use that the target deployment’s model lacks, or has as another kind.' },
);

const Outcome = Type.Union([Type.Literal('CREATED'), Type.Literal('UPDATED')]);

export const PromotedReportSchema = Type.Object(
  {
    sourceReportId: Id,
    targetReportId: Id,
    outcome: { ...Outcome, description: 'CREATED: a new copy; UPDATED: the copy an earlier promotion made, overwritten.' },
  },
  { $id: 'PromotedReport' },
);

export const PromotionPreviewSchema = Type.Object(
  {
    sourceDeploymentId: Id,
    sourceWorkbookId: Id,
    targetDeploymentId: Id,
    targetWorkbookId: {
      ...Nullable(Id),
      description: 'The copy an earlier promotion made, which this one would update; null: a new copy would be made.',
    },
    outcome: { ...Outcome, description: 'What a promotion would do now: CREATED (a new copy) or UPDATED (the earlier copy).' },
    reportIds: Type.Array(Id, { description: 'The source reports that would be copied: those the draft or the published dashboard shows.' }),
    targetBuildId: {
      ...Nullable(Id),
      description: 'The target’s newest successful build of its deploy branch, whose model the members are checked against; null: none yet.',
    },
    missingMembers: Type.Array(Type.Ref('PromotionMissingMember'), { description: 'Empty when the promotion can go ahead.' }),
    ready: Type.Boolean({ description: 'True when nothing is missing: a promotion now would succeed (access allowing).' }),
  },
  { $id: 'WorkbookPromotionPreview' },
);
export type PromotionPreview = Static<typeof PromotionPreviewSchema>;

export const PromotionSchema = Type.Object(
  {
    id: Id,
    sourceDeploymentId: Id,
    sourceWorkbookId: Id,
    targetDeploymentId: Id,
    targetWorkbookId: Id,
    outcome: { ...Outcome, description: 'CREATED: the copy was made; UPDATED: the copy an earlier promotion made was updated.' },
    reports: Type.Array(Type.Ref('PromotedReport')),
    dashboardPublished: Type.Boolean({ description: 'Whether the source’s published dashboard was published on the copy (as its next version).' }),
    idempotencyKey: Nullable(Type.String()),
    createdBy: Nullable(Id),
    createdAt: Timestamp,
  },
  { $id: 'WorkbookPromotion' },
);
export type Promotion = Static<typeof PromotionSchema>;

export const PromotionLinkSchema = Type.Object(
  {
    id: Id,
    kind: Type.Union([Type.Literal('WORKBOOK'), Type.Literal('REPORT')]),
    sourceDeploymentId: Id,
    sourceWorkbookId: Id,
    sourceReportId: { ...Nullable(Id), description: 'Null on the workbook’s own link.' },
    targetDeploymentId: Id,
    targetWorkbookId: Id,
    targetReportId: { ...Nullable(Id), description: 'Null on the workbook’s own link.' },
    lastPromotionId: Id,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'WorkbookPromotionLink' },
);
export type PromotionLink = Static<typeof PromotionLinkSchema>;

export const PromotionListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const promotionSchemas = [
  MissingMemberSchema,
  PromotedReportSchema,
  PromotionPreviewSchema,
  PromotionSchema,
  PromotionLinkSchema,
  PageOf('WorkbookPromotion'),
  PageOf('WorkbookPromotionLink'),
];
