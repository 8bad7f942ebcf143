import type { AiSettingsRow, AiUsageRow, Executor } from '../../db/tables.js';
import type { SecretColumn } from '../../secrets/index.js';

/** What an account's provider key is sealed to: copied to another tenant's row, it does not open. */
export const apiKeySealedAs = (tenantId: number) => `ai-settings:${tenantId}:api-key`;

/** The column of sealed values, for the secrets service's start-up check and re-encryption. */
export const aiSettingsSecretColumn: SecretColumn = {
  table: 'ai_settings',
  id: 'id',
  value: 'provider_api_key',
  contextColumns: ['tenant_id'],
  context: (row) => apiKeySealedAs(Number(row.tenant_id)),
};

export function findSettings(db: Executor, tenantId: number): Promise<AiSettingsRow | undefined> {
  return db.selectFrom('ai_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
}

export type SettingsValues = Omit<AiSettingsRow, 'id' | 'tenant_id' | 'updated_at'>;

/** Writes a tenant's settings whole (the service merged them). */
export async function saveSettings(db: Executor, tenantId: number, values: SettingsValues, at: string): Promise<void> {
  await db
    .insertInto('ai_settings')
    .values({ tenant_id: tenantId, ...values, updated_at: at })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ ...values, updated_at: at }))
    .execute();
}

/** Who spent tokens: a user of the account, or an embed user. */
export type Spender = { userId: number } | { embedUserId: number };

export const subjectOf = (who: Spender): string => ('userId' in who ? `user:${who.userId}` : `embed-user:${who.embedUserId}`);

/** Adds one answer's tokens to the spender's month, in one statement (concurrent answers add up). */
export async function addUsage(
  db: Executor,
  tenantId: number,
  month: string,
  who: Spender,
  tokens: { promptTokens: number; completionTokens: number },
  at: string,
): Promise<void> {
  await db
    .insertInto('ai_usage')
    .values({
      tenant_id: tenantId,
      month,
      subject: subjectOf(who),
      user_id: 'userId' in who ? who.userId : null,
      embed_user_id: 'embedUserId' in who ? who.embedUserId : null,
      prompt_tokens: tokens.promptTokens,
      completion_tokens: tokens.completionTokens,
      answers: 1,
      updated_at: at,
    })
    .onConflict((oc) =>
      oc.columns(['tenant_id', 'month', 'subject']).doUpdateSet((eb) => ({
        prompt_tokens: eb('ai_usage.prompt_tokens', '+', eb.ref('excluded.prompt_tokens')),
        completion_tokens: eb('ai_usage.completion_tokens', '+', eb.ref('excluded.completion_tokens')),
        answers: eb('ai_usage.answers', '+', 1),
        updated_at: at,
      })),
    )
    .execute();
}

export function findUsage(db: Executor, tenantId: number, month: string, who: Spender): Promise<AiUsageRow | undefined> {
  return db
    .selectFrom('ai_usage')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('month', '=', month)
    .where('subject', '=', subjectOf(who))
    .executeTakeFirst();
}

export function listUsage(db: Executor, tenantId: number, month: string): Promise<AiUsageRow[]> {
  return db.selectFrom('ai_usage').selectAll().where('tenant_id', '=', tenantId).where('month', '=', month).orderBy('id').execute();
}
