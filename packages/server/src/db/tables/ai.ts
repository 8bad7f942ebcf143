import type { Generated, Selectable } from 'kysely';

/** An account's AI settings (migration 0034); a tenant without a row has the defaults. */
export interface AiSettingsTable {
  id: Generated<number>;
  tenant_id: number;
  /** 0 or 1. */
  enabled: number;
  provider_base_url: string | null;
  provider_model: string | null;
  /** Sealed by secrets/; null: none (or no provider of the account's own). */
  provider_api_key: string | null;
  max_tokens_per_answer: number;
  max_tool_calls_per_answer: number;
  tokens_per_user_per_month: number | null;
  updated_at: string;
}

/** Tokens spent by one user or embed user in one month (migration 0034). */
export interface AiUsageTable {
  id: Generated<number>;
  tenant_id: number;
  /** `YYYY-MM`. */
  month: string;
  /** `user:<id>` or `embed-user:<id>`. */
  subject: string;
  user_id: number | null;
  embed_user_id: number | null;
  prompt_tokens: number;
  completion_tokens: number;
  answers: number;
  updated_at: string;
}

export type AiSettingsRow = Selectable<AiSettingsTable>;
export type AiUsageRow = Selectable<AiUsageTable>;
