import type { ColumnType, Generated, Selectable } from 'kysely';

/** The embed user who made a copy from the shared workspace (migration 0038); null for everything else, and optional on insert. */
export type EmbedOwnerColumn = ColumnType<number | null, number | null | undefined, number | null>;

// Tables of the content: folders, workbooks, reports, dashboards and their versions, favorites, notifications, dashboard exports.

export type ItemType = 'FOLDER' | 'WORKBOOK' | 'REPORT';

export interface FolderTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  /** The containing folder; null at the workspace root. The only record of the tree's shape. */
  parent_id: number | null;
  name: string;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export interface WorkbookTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  folder_id: number | null;
  name: string;
  slug: string;
  /** JSON object. */
  meta: string;
  /** JSON object. */
  calculated_fields: string;
  /** JSON DashboardConfig or null. */
  dashboard_draft: string | null;
  dashboard_published: string | null;
  /** JSON Dashboard or null. */
  published_dashboard: string | null;
  created_by: number | null;
  embed_owner_id: EmbedOwnerColumn;
  created_at: string;
  updated_at: string;
}

export interface ReportTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  folder_id: number | null;
  name: string;
  public_id: string;
  kind: string | null;
  title: string | null;
  description: string | null;
  sql_query: string | null;
  python_code: string | null;
  /** JSON values (spec may be a string or an object), or null. */
  spec: string | null;
  meta: string | null;
  preferences: string | null;
  period_comparisons: string | null;
  fill_missing_rows: string | null;
  /** JSON: the report's placements in external spreadsheets (reference 3.0), or null for none. */
  placements: string | null;
  last_viewed_at: string | null;
  created_by: number | null;
  embed_owner_id: EmbedOwnerColumn;
  created_at: string;
  updated_at: string;
  /** The revision of the report's name and content (migration 0041): 1 when created, one more per update that changes them. */
  version: Generated<number>;
}

/** A workbook's published dashboard: what stays across its versions (migration 0016). */
export interface DashboardTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  workbook_id: number;
  public_id: string;
  /** 0 or 1: signed embedding allowed (reference 3.6). */
  allow_embed: number;
  /** JSON object: AI widget id to `{threadId, checksum}` (reference 8.G.4), or null for none. */
  ai_widget_threads: Generated<string | null>;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export type DashboardVersionStatus = 'draft' | 'published' | 'archived';

/** One publication of a dashboard. */
export interface DashboardVersionTable {
  id: Generated<number>;
  tenant_id: number;
  dashboard_id: number;
  version_number: number;
  status: DashboardVersionStatus;
  title: string | null;
  description: string | null;
  /** JSON DashboardConfig. */
  config: string;
  created_by: number | null;
  created_at: string;
}

/** A report as a dashboard version froze it. */
export interface DashboardReportSnapshotTable {
  id: Generated<number>;
  tenant_id: number;
  version_id: number;
  position: number;
  report_id: number;
  /** JSON: the ReportSnapshot fields other than id, reportId and versionNumber. */
  content: string;
}

export interface FavoriteTable {
  tenant_id: number;
  user_id: number;
  item_type: ItemType;
  item_id: number;
  created_at: string;
}

/** A scheduled delivery of one published dashboard (migration 0027); booleans are 0 or 1. */
export interface NotificationTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  dashboard_id: number;
  schedule_type: string;
  minute: number | null;
  hour: number | null;
  day_of_week: number | null;
  day_of_month: number | null;
  cron_expression: string;
  timezone: string;
  is_enabled: number;
  notification_enabled: number;
  notification_format: string;
  notification_ai_summary: number;
  /** JSON arrays, or null. */
  filters: string | null;
  time_grains: string | null;
  member_switchers: string | null;
  /** The next occurrence (UTC ISO), null when the schedule never runs again. */
  next_run_at: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export interface NotificationRecipientTable {
  id: Generated<number>;
  tenant_id: number;
  notification_id: number;
  type: string;
  /** `user:<id>`, `embed-user:<id>` or `slack:<channel>`: unique per notification. */
  recipient_key: string;
  user_id: number | null;
  embed_user_id: number | null;
  channel_id: string | null;
  channel_name: string | null;
  /** JSON object, or null. */
  security_context: string | null;
  created_at: string;
  updated_at: string;
}

/** One claimed occurrence of a notification's schedule: unique per (notification, scheduled_for). */
export interface NotificationDeliveryTable {
  id: Generated<number>;
  tenant_id: number;
  notification_id: number;
  scheduled_for: string;
  claimed_at: string;
  /** The process (jobs owner name) that claimed it. */
  claimed_by: string;
  job_id: number | null;
  status: string;
  /** 1 when mails go out (`notificationEnabled`), 0 when it is rendered into the history only. */
  send: number;
  format: string;
  message: string | null;
  finished_at: string | null;
  /** `SCHEDULE` (a claimed occurrence) or `SEND_NOW` (…/send-now; migration 0042). */
  trigger: Generated<string>;
}

export interface NotificationDeliveryRecipientTable {
  id: Generated<number>;
  tenant_id: number;
  delivery_id: number;
  type: string;
  user_id: number | null;
  embed_user_id: number | null;
  email: string | null;
  status: string;
  attempts: Generated<number>;
  last_error: string | null;
  updated_at: string;
  /** JSON: the rows the recipient's last render showed, per widget (bounded), for the next delivery's summary; null when not kept. */
  render_data: string | null;
}

export type NotificationRow = Selectable<NotificationTable>;
export type NotificationRecipientRow = Selectable<NotificationRecipientTable>;
export type NotificationDeliveryRow = Selectable<NotificationDeliveryTable>;
export type NotificationDeliveryRecipientRow = Selectable<NotificationDeliveryRecipientTable>;
export type FolderRow = Selectable<FolderTable>;
export type WorkbookRow = Selectable<WorkbookTable>;
export type ReportRow = Selectable<ReportTable>;
export type DashboardRow = Selectable<DashboardTable>;
export type DashboardVersionRow = Selectable<DashboardVersionTable>;
export type DashboardReportSnapshotRow = Selectable<DashboardReportSnapshotTable>;

/** A dashboard export (reference 8.A; migration 0028): its render job, then its file until it expires. */
export interface DashboardExportTable {
  id: Generated<number>;
  public_id: string;
  tenant_id: number;
  deployment_id: number;
  dashboard_id: number;
  submitted_by: number;
  identity: string;
  job_id: number | null;
  format: 'png' | 'pdf';
  status: 'pending' | 'processing' | 'completed' | 'failed';
  error: string | null;
  content_type: string | null;
  content: Buffer | null;
  created_at: string;
  expires_at: string;
  updated_at: string;
}

export type DashboardExportRow = Selectable<DashboardExportTable>;

/** A comment on an embedded dashboard (reference 8.C, migration 0036): a thread's root (`parent_id` null) or a reply to one. */
export interface DashboardCommentTable {
  id: Generated<number>;
  tenant_id: number;
  dashboard_id: number;
  /** The partition: conversations live inside one embed tenant. */
  embed_tenant_id: number;
  parent_id: number | null;
  /** The embed user who wrote it; null once they are gone. */
  author_id: number | null;
  /** Kept after removal (the API shows it emptied). */
  body: string;
  /** JSON array of the embed user ids the body has mentioned, over all its edits (each is mailed once). */
  mentions: string;
  created_at: string;
  edited_at: string | null;
  removed_at: string | null;
  /** On roots only: the thread's state. */
  resolved_at: string | null;
  resolved_by: number | null;
  last_activity_at: string;
}
export type DashboardCommentRow = Selectable<DashboardCommentTable>;

/** One promotion of a workbook to another deployment (migration 0040). Item ids are kept after the items go (history). */
export interface WorkbookPromotionTable {
  id: Generated<number>;
  tenant_id: number;
  source_deployment_id: number;
  source_workbook_id: number;
  target_deployment_id: number;
  target_workbook_id: number;
  /** CREATED or UPDATED: whether the copy was made or an earlier one updated. */
  outcome: string;
  /** JSON `[{sourceReportId, targetReportId, outcome}]`. */
  reports: string;
  /** 0 or 1: whether the source's published dashboard was published on the copy. */
  dashboard_published: number;
  idempotency_key: string | null;
  /** SHA-256 of the canonical request body: a key sent again with another body is refused. */
  request_hash: string;
  created_by: number | null;
  created_at: string;
}
export type WorkbookPromotionRow = Selectable<WorkbookPromotionTable>;

/** A source workbook or report and its promoted copy in another deployment (migration 0040); gone with the copy or either workbook. */
export interface WorkbookPromotionLinkTable {
  id: Generated<number>;
  tenant_id: number;
  /** WORKBOOK (the workbook's own link, report ids null) or REPORT. */
  kind: string;
  source_deployment_id: number;
  source_workbook_id: number;
  target_deployment_id: number;
  target_workbook_id: number;
  source_report_id: number | null;
  target_report_id: number | null;
  last_promotion_id: number;
  created_at: string;
  updated_at: string;
}
export type WorkbookPromotionLinkRow = Selectable<WorkbookPromotionLinkTable>;
