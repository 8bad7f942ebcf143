import { type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * The account's AI settings (docs/api/ai-settings.md): the switch, its own model provider if any
 * (the server's otherwise) and the limits; and the tokens each user and embed user spent a month,
 * which the monthly budget is checked against.
 */
export function aiSettings(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      await table(db, 'ai_settings')
        // One row per tenant, written on its first change; a tenant without one has the defaults.
        .addColumn('tenant_id', ref, (c) => c.notNull().unique().references('tenants.id').onDelete('cascade'))
        .addColumn('enabled', 'integer', (c) => c.notNull())
        // The account's own provider: all three set, or none (the server's is used).
        .addColumn('provider_base_url', 'text')
        .addColumn('provider_model', 'text')
        // secrets/: bound to `ai-settings:<tenantId>:api-key`; null with a provider that asks for none.
        .addColumn('provider_api_key', 'text')
        .addColumn('max_tokens_per_answer', 'integer', (c) => c.notNull())
        .addColumn('max_tool_calls_per_answer', 'integer', (c) => c.notNull())
        // Null: no monthly budget.
        .addColumn('tokens_per_user_per_month', 'integer')
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();

      await table(db, 'ai_usage')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        // `YYYY-MM` of the app's clock, in UTC.
        .addColumn('month', 'text', (c) => c.notNull())
        // `user:<id>` or `embed-user:<id>`: one row per spender and month (the id columns, one null, cannot be a unique key).
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('user_id', ref, (c) => c.references('users.id').onDelete('cascade'))
        .addColumn('embed_user_id', ref, (c) => c.references('embed_users.id').onDelete('cascade'))
        .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
        .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
        .addColumn('answers', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ai_usage_by_subject').on('ai_usage').columns(['tenant_id', 'month', 'subject']).unique().execute();
    },
  };
}
