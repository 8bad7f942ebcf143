import { Type, type Static } from 'typebox';
import { Id, Nullable, NullablePageQuery, PageOf } from '../../shared/schemas.js';
import { SCHEDULE_TYPES } from './schedule.js';
import { OPERATORS as FILTER_OPERATORS } from '../../semantic-layer/query/query.js';
import { GRANULARITIES as TIME_GRAINS } from '../../semantic-layer/query/dialect.js';

/*
 * Reference 6 shapes. Null in a query or body member means the same as leaving it out, except
 * for `filters`, `timeGrains` and `memberSwitchers` of an update, where null clears the set.
 */

/** A string enum with its literal type (a Union over a mapped array loses it). */
const oneOf = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

const MEMBER_PATH = '.+\\..+';
const Member = (description: string) => Type.String({ pattern: MEMBER_PATH, minLength: 3, maxLength: 512, description });

const FilterValue = Type.Unsafe<unknown>({
  description: 'A string, number, boolean or array; left out for the `is_*` operators, `[start, end]` for `between`.',
  anyOf: [{ type: 'string', maxLength: 10_000 }, { type: 'number' }, { type: 'boolean' }, { type: 'array', maxItems: 1000 }, { type: 'null' }],
});
const Anything = Type.Unsafe<unknown>({});

const filterFields = (member: ReturnType<typeof Member> | ReturnType<typeof Type.String>) => ({
  member,
  operator: Type.Optional(Nullable(oneOf(FILTER_OPERATORS))),
  value: Type.Optional(FilterValue),
  caseSensitive: Type.Optional(Anything),
  startInclusive: Type.Optional(Anything),
  endInclusive: Type.Optional(Anything),
});

export const DashboardFilterInputSchema = Type.Object(filterFields(Member('A dimension path such as `orders.status`.')), { additionalProperties: false });
export type DashboardFilterInput = Static<typeof DashboardFilterInputSchema>;
export const DashboardFilterSchema = Type.Object(filterFields(Type.String()), { $id: 'DashboardFilter' });

export const TimeGrainInputSchema = Type.Object({ member: Member('A time dimension path.'), grain: oneOf(TIME_GRAINS) }, { additionalProperties: false });
export type TimeGrainInput = Static<typeof TimeGrainInputSchema>;
export const TimeGrainSchema = Type.Object({ member: Type.String(), grain: Type.String() }, { $id: 'DashboardTimeGrain' });

export const MemberSwitcherInputSchema = Type.Object(
  {
    member: Member('The member the switcher control replaces.'),
    selected: Type.String({ minLength: 1, maxLength: 512, description: 'The member to show instead, without the view prefix.' }),
  },
  { additionalProperties: false },
);
export type MemberSwitcherInput = Static<typeof MemberSwitcherInputSchema>;
export const MemberSwitcherSchema = Type.Object({ member: Type.String(), selected: Type.String() }, { $id: 'DashboardMemberSwitcher' });

const Filters = Nullable(Type.Array(DashboardFilterInputSchema, { maxItems: 100 }));
const TimeGrains = Nullable(Type.Array(TimeGrainInputSchema, { maxItems: 100 }));
const MemberSwitchers = Nullable(Type.Array(MemberSwitcherInputSchema, { maxItems: 100 }));
const Format = oneOf(['png', 'pdf'] as const);
const ScheduleTypeSchema = oneOf(SCHEDULE_TYPES);

const scheduleFields = {
  minute: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 59 }))),
  hour: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 23 }))),
  dayOfWeek: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 6, description: 'Sunday is 0.' }))),
  dayOfMonth: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 31 }))),
  customCron: Type.Optional(Nullable(Type.String({ maxLength: 200, description: 'Five fields: minute hour day-of-month month day-of-week (CUSTOM only).' }))),
  timezone: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64, description: 'An IANA zone; default UTC.' }))),
};

export const CreateNotificationBody = Type.Object(
  {
    scheduleType: ScheduleTypeSchema,
    ...scheduleFields,
    dashboardId: Type.Optional(Nullable(Id)),
    dashboardPublicId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
    filters: Type.Optional(Filters),
    timeGrains: Type.Optional(TimeGrains),
    memberSwitchers: Type.Optional(MemberSwitchers),
    notificationFormat: Type.Optional(Nullable(Format)),
    notificationEnabled: Type.Optional(Nullable(Type.Boolean())),
    notificationAiSummary: Type.Optional(Nullable(Type.Boolean())),
  },
  { additionalProperties: false },
);
export type CreateNotificationInput = Static<typeof CreateNotificationBody>;

export const UpdateNotificationBody = Type.Object(
  {
    scheduleType: Type.Optional(Nullable(ScheduleTypeSchema)),
    ...scheduleFields,
    isEnabled: Type.Optional(Nullable(Type.Boolean())),
    notificationEnabled: Type.Optional(Nullable(Type.Boolean())),
    notificationFormat: Type.Optional(Nullable(Format)),
    notificationAiSummary: Type.Optional(Nullable(Type.Boolean())),
    filters: Type.Optional(Filters),
    timeGrains: Type.Optional(TimeGrains),
    memberSwitchers: Type.Optional(MemberSwitchers),
  },
  { additionalProperties: false },
);
export type UpdateNotificationInput = Static<typeof UpdateNotificationBody>;

export const NotificationSchema = Type.Object(
  {
    id: Id,
    dashboardId: Id,
    deploymentId: Id,
    cronExpression: Type.String(),
    timezone: Type.String(),
    isEnabled: Type.Boolean({ description: 'Whether the schedule runs.' }),
    humanReadableSchedule: Type.String(),
    notificationEnabled: Type.Boolean({ description: 'False: each occurrence is still rendered into the deliveries history, but nothing is sent.' }),
    notificationFormat: Type.String({ enum: ['png', 'pdf'] }),
    notificationAiSummary: Type.Boolean(),
    filters: Type.Optional(Nullable(Type.Array(Type.Ref('DashboardFilter')))),
    timeGrains: Type.Optional(Nullable(Type.Array(Type.Ref('DashboardTimeGrain')))),
    memberSwitchers: Type.Optional(Nullable(Type.Array(Type.Ref('DashboardMemberSwitcher')))),
    nextRunAt: Nullable(Type.String({ format: 'date-time', description: 'Extension: the next occurrence (UTC); null while the schedule is off.' })),
  },
  { $id: 'NotificationDto' },
);
export type Notification = Static<typeof NotificationSchema>;

const PageFields = NullablePageQuery;

export const ListNotificationsQuery = Type.Object(
  {
    dashboardId: Type.Optional(Nullable(Id)),
    dashboardPublicId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
    recipientUserId: Type.Optional(Nullable(Id)),
    recipientEmail: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 320 }))),
    recipientEmbedTenantName: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
    recipientExternalId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
    ...PageFields,
  },
  { additionalProperties: false },
);
export type ListNotificationsInput = Static<typeof ListNotificationsQuery>;

export const PageQuery = Type.Object({ ...PageFields }, { additionalProperties: false });
export type PageInput = Static<typeof PageQuery>;

export const NotificationParams = Type.Object({ deploymentId: Id, id: Id });

export const RECIPIENT_TYPES = ['USER', 'EMBED_USER', 'SLACK'] as const;
const RecipientType = oneOf(RECIPIENT_TYPES);

export const NotificationRecipientSchema = Type.Object(
  {
    type: Type.String({ enum: [...RECIPIENT_TYPES] }),
    userId: Type.Optional(Nullable(Id)),
    email: Type.Optional(Nullable(Type.String())),
    username: Type.Optional(Nullable(Type.String())),
    embedUserId: Type.Optional(Nullable(Id)),
    embedTenantName: Type.Optional(Nullable(Type.String())),
    externalId: Type.Optional(Nullable(Type.String())),
    channelId: Type.Optional(Nullable(Type.String())),
    channelName: Type.Optional(Nullable(Type.String())),
  },
  { $id: 'NotificationRecipient' },
);
export type NotificationRecipient = Static<typeof NotificationRecipientSchema>;

export const RecipientInputSchema = Type.Object(
  {
    type: RecipientType,
    userId: Type.Optional(Nullable(Id)),
    email: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 320 }))),
    embedTenantName: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
    externalId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
    groups: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 }))),
    userAttributes: Type.Optional(
      Nullable(
        Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }), value: Anything }, { additionalProperties: false }), { maxItems: 100 }),
      ),
    ),
    securityContext: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true, maxProperties: 100 }))),
    channelId: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    channelName: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  },
  { additionalProperties: false },
);
export type RecipientInput = Static<typeof RecipientInputSchema>;

export const AddRecipientsBody = Type.Object(
  { recipients: Type.Array(RecipientInputSchema, { minItems: 1, maxItems: 1000 }) },
  { additionalProperties: false },
);

export const AddRecipientsResponse = Type.Object(
  {
    createdRecipients: Type.Array(Type.Ref('NotificationRecipient')),
    updatedRecipients: Type.Array(Type.Ref('NotificationRecipient')),
    unchangedRecipients: Type.Array(Type.Ref('NotificationRecipient')),
  },
  { $id: 'AddNotificationRecipientsResponse' },
);

export const RemoveRecipientsBody = Type.Object(
  {
    recipients: Type.Array(
      Type.Object(
        {
          type: RecipientType,
          id: Type.Union([Id, Type.String({ minLength: 1, maxLength: 255 })], { description: 'userId (USER), embedUserId (EMBED_USER) or channelId (SLACK).' }),
          embedTenantName: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64, description: 'Required for EMBED_USER.' }))),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { additionalProperties: false },
);
export type RemoveRecipientInput = Static<typeof RemoveRecipientsBody>['recipients'][number];

export const DELIVERY_TRIGGERS = ['SCHEDULE', 'SEND_NOW'] as const;

export const DeliveryRecipientSchema = Type.Object({
  type: Type.String({ enum: [...RECIPIENT_TYPES] }),
  userId: Nullable(Id),
  embedUserId: Nullable(Id),
  email: Nullable(Type.String()),
  status: Type.String({
    enum: ['pending', 'sent', 'failed', 'skipped'],
    description:
      '`sent` once the SMTP server accepted the mail; `failed` after a failed render, or a send still refused after the last try; `skipped`: not sent, `lastError` says why.',
  }),
  attempts: Type.Integer({
    minimum: 0,
    description: 'Sends tried for this recipient (a failed send is tried again, with growing waits, up to NOTIFICATION_SEND_ATTEMPTS).',
  }),
  lastError: Nullable(
    Type.String({ description: 'The last failure (the SMTP server’s reply, or the render’s error), or why nothing was sent; null once sent.' }),
  ),
  updatedAt: Type.String({ format: 'date-time' }),
});

export const NotificationDeliverySchema = Type.Object(
  {
    id: Id,
    notificationId: Id,
    scheduledFor: Type.String({
      format: 'date-time',
      description: 'The occurrence of the schedule this delivery is for (UTC); for a send-now delivery, when it was asked for.',
    }),
    trigger: oneOf(DELIVERY_TRIGGERS, '`SCHEDULE`: an occurrence of the schedule; `SEND_NOW`: asked for with …/send-now.'),
    claimedAt: Type.String({ format: 'date-time' }),
    status: Type.String({ enum: ['pending', 'running', 'succeeded', 'failed'] }),
    send: Type.Boolean({ description: 'Whether mails go out (the notification’s notificationEnabled when it was claimed).' }),
    format: Type.String({ enum: ['png', 'pdf'] }),
    message: Nullable(
      Type.String({ description: 'Why some or all mail was not sent, or went without an AI summary; null when every recipient was mailed as asked.' }),
    ),
    jobId: Nullable(Id),
    finishedAt: Nullable(Type.String({ format: 'date-time' })),
    recipients: Type.Array(DeliveryRecipientSchema),
  },
  { $id: 'NotificationDelivery' },
);
export type NotificationDelivery = Static<typeof NotificationDeliverySchema>;

export const notificationSchemas = [
  DashboardFilterSchema,
  TimeGrainSchema,
  MemberSwitcherSchema,
  NotificationSchema,
  PageOf('NotificationDto'),
  NotificationRecipientSchema,
  PageOf('NotificationRecipient'),
  AddRecipientsResponse,
  NotificationDeliverySchema,
  PageOf('NotificationDelivery'),
];
