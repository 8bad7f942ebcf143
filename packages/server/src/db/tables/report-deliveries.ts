import type { Generated, Selectable } from 'kysely';

// Tables of report deliveries (migration 0039): scheduled mailings of a report's rows and their runs.

export interface ReportDeliveryTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  report_id: number;
  name: string;
  /** `csv`. */
  format: string;
  cron: string;
  timezone: string;
  /** JSON array of StoredDeliveryRecipient (areas/report-deliveries). */
  recipients: string;
  /** 1 while paused: the schedule does not fire (a run started by hand still runs). */
  paused: number;
  /** The next occurrence (UTC); null while paused. */
  next_run_at: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}
export type ReportDeliveryRow = Selectable<ReportDeliveryTable>;

export type ReportDeliveryRunStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface ReportDeliveryRunTable {
  id: Generated<number>;
  tenant_id: number;
  delivery_id: number;
  /** `schedule` (claimed when due) or `manual` (POST …/run). */
  trigger: string;
  /** The occurrence a scheduled run is for; null for a manual run. */
  scheduled_for: string | null;
  status: ReportDeliveryRunStatus;
  job_id: number | null;
  message: string | null;
  /** JSON array of each recipient's outcome; null until the run finishes. */
  results: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}
export type ReportDeliveryRunRow = Selectable<ReportDeliveryRunTable>;
