import type { Caller } from '../../access/caller.js';
import { createModelClient, providerUrlProblem, type ModelClient, type ServerProviderConfig } from '../../ai/index.js';
import type { Audit, AuditEvent } from '../../audit/index.js';
import type { Store } from '../../db/database.js';
import type { AiSettingsRow } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import type { Outbound } from '../../outbound/index.js';
import type { Secrets } from '../../secrets/index.js';
import { ApiError, type FieldError } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import type { AiLimits, AiSettings, AiSettingsInput, AiUsage } from './ai-settings.schemas.js';
import { addUsage, apiKeySealedAs, findSettings, findUsage, listUsage, saveSettings, type SettingsValues, type Spender } from './ai-settings.store.js';

/** What an account that never changed anything has: AI off, no provider of its own, these limits. */
export const AI_DEFAULTS: Readonly<{ enabled: boolean; limits: Readonly<AiLimits> }> = Object.freeze({
  enabled: false,
  limits: Object.freeze({ maxTokensPerAnswer: 1024, maxToolCallsPerAnswer: 8, tokensPerUserPerMonth: null }),
});

export interface AiSettingsDeps {
  store: Store;
  secrets: Secrets;
  audit: Audit;
  now: Clock;
  /** The platform's outbound service: an account's own provider is a URL an admin typed, so it passes the usual address guard. */
  outbound: Pick<Outbound, 'fetch'>;
  /** The operator's default provider and the outbound service that may reach its host even when private; null: none. */
  server: { provider: ServerProviderConfig; outbound: Pick<Outbound, 'fetch'> } | null;
  /** The model client's deadline and retries (tests shorten them). */
  client?: { deadlineMs?: number; retries?: number; retryBaseMs?: number };
}

/** `YYYY-MM` of the app's clock, UTC: the month usage is counted in. */
export const monthOf = (clock: Clock): string => clock().toISOString().slice(0, 7);

/** The first day of the month after `month`, for saying when a budget renews. */
function nextMonth(month: string): string {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  return mon === 12 ? `${year + 1}-01-01` : `${year}-${String(mon + 1).padStart(2, '0')}-01`;
}

function limitsOf(row: AiSettingsRow | undefined): AiLimits {
  if (row === undefined) return { ...AI_DEFAULTS.limits };
  return {
    maxTokensPerAnswer: row.max_tokens_per_answer,
    maxToolCallsPerAnswer: row.max_tool_calls_per_answer,
    tokensPerUserPerMonth: row.tokens_per_user_per_month,
  };
}

const hasOwnProvider = (row: AiSettingsRow | undefined): row is AiSettingsRow & { provider_base_url: string; provider_model: string } =>
  row !== undefined && row.provider_base_url !== null && row.provider_model !== null;

const originOf = (url: string): string => new URL(url).origin;

/**
 * The account's AI settings (extension, admin only) and what AI features call: the client of the
 * account's provider (its own, else the server's), the switch, the monthly budget and the usage
 * that is counted against it.
 */
export function aiSettingsService(deps: AiSettingsDeps) {
  const { store, secrets, audit, now } = deps;

  function view(row: AiSettingsRow | undefined): AiSettings {
    const provider = hasOwnProvider(row)
      ? { baseUrl: row.provider_base_url, model: row.provider_model, apiKeySet: row.provider_api_key !== null, source: 'account' as const }
      : deps.server !== null
        ? {
            baseUrl: deps.server.provider.baseUrl,
            model: deps.server.provider.model,
            apiKeySet: deps.server.provider.apiKey.reveal() !== '',
            source: 'server' as const,
          }
        : null;
    return { enabled: row === undefined ? AI_DEFAULTS.enabled : row.enabled === 1, provider, limits: limitsOf(row) };
  }

  /** The values the schema cannot check; 400 naming every bad one. */
  function check(input: AiSettingsInput, stored: AiSettingsRow | undefined): void {
    const errors: FieldError[] = [];
    const provider = input.provider;
    if (provider) {
      const problem = providerUrlProblem(provider.baseUrl);
      if (problem !== null) errors.push({ pointer: '/body/provider/baseUrl', message: `"${provider.baseUrl}" ${problem}` });
      // A stored key goes only to the origin it was given for: moving elsewhere needs the key again (or null).
      else if (
        provider.apiKey === undefined &&
        hasOwnProvider(stored) &&
        stored.provider_api_key !== null &&
        originOf(stored.provider_base_url) !== originOf(provider.baseUrl)
      )
        errors.push({
          pointer: '/body/provider/apiKey',
          message: `the stored key was given for ${originOf(stored.provider_base_url)}; send apiKey (or null for none) to move the provider to ${originOf(provider.baseUrl)}`,
        });
    }
    if (errors.length > 0)
      throw new ApiError('VALIDATION_FAILED', `The request is not valid: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}.`, { errors });
  }

  /** The explicit audit events of one change, one per kind of change: the switch, the provider, the limits. */
  function eventsOf(before: AiSettings, after: AiSettings, input: AiSettingsInput): AuditEvent[] {
    const events: AuditEvent[] = [];
    if (before.enabled !== after.enabled) events.push({ action: after.enabled ? 'ai.enabled' : 'ai.disabled' });
    if (input.provider === null && before.provider?.source === 'account') events.push({ action: 'ai.provider.removed' });
    if (input.provider) {
      events.push({
        action: 'ai.provider.set',
        details: { origin: originOf(input.provider.baseUrl), model: input.provider.model, keyChanged: input.provider.apiKey !== undefined },
      });
    }
    const changed = (Object.keys(after.limits) as Array<keyof AiLimits>).filter((k) => before.limits[k] !== after.limits[k]);
    if (changed.length > 0) events.push({ action: 'ai.limits.changed', details: Object.fromEntries(changed.map((k) => [k, after.limits[k]])) });
    return events;
  }

  function clientOf(row: AiSettingsRow | undefined, tenantId: number): ModelClient | null {
    const options = deps.client ?? {};
    if (hasOwnProvider(row)) {
      const apiKey = row.provider_api_key === null ? '' : secrets.open(row.provider_api_key, apiKeySealedAs(tenantId));
      return createModelClient({ baseUrl: row.provider_base_url, model: row.provider_model, apiKey, outbound: deps.outbound, ...options });
    }
    if (deps.server === null) return null;
    const { provider, outbound } = deps.server;
    return createModelClient({ baseUrl: provider.baseUrl, model: provider.model, apiKey: provider.apiKey.reveal(), outbound, ...options });
  }

  const settings = {
    async get(caller: Caller): Promise<AiSettings> {
      caller.access.requireAdmin('read the AI settings');
      return view(await findSettings(store.db, caller.actor.tenantId));
    },

    /** Only the keys given change; all or nothing, with an audit event for each kind of change. */
    async update(caller: Caller, input: AiSettingsInput): Promise<AiSettings> {
      caller.access.requireAccountAdmin('change the AI settings');
      const tenantId = caller.actor.tenantId;
      const { after, events } = await serialized(store, lockKey.accountSettings(tenantId), async (trx) => {
        const stored = await findSettings(trx, tenantId);
        check(input, stored);
        const before = view(stored);
        const limits = { ...before.limits, ...input.limits };
        const values: SettingsValues = {
          enabled: (input.enabled ?? before.enabled) ? 1 : 0,
          provider_base_url: stored?.provider_base_url ?? null,
          provider_model: stored?.provider_model ?? null,
          provider_api_key: stored?.provider_api_key ?? null,
          max_tokens_per_answer: limits.maxTokensPerAnswer,
          max_tool_calls_per_answer: limits.maxToolCallsPerAnswer,
          tokens_per_user_per_month: limits.tokensPerUserPerMonth,
        };
        if (input.provider === null) {
          values.provider_base_url = null;
          values.provider_model = null;
          values.provider_api_key = null;
        } else if (input.provider !== undefined) {
          values.provider_base_url = input.provider.baseUrl.replace(/\/+$/, '');
          values.provider_model = input.provider.model;
          if (input.provider.apiKey !== undefined)
            values.provider_api_key = input.provider.apiKey === null ? null : secrets.seal(input.provider.apiKey, apiKeySealedAs(tenantId));
        }
        await saveSettings(trx, tenantId, values, timestamp(now));
        const changed = view({ id: stored?.id ?? 0, tenant_id: tenantId, updated_at: '', ...values });
        return { after: changed, events: eventsOf(before, changed, input) };
      });
      // Recorded once committed: whether the log is on is read from the store, whose one SQLite
      // connection the transaction holds while it runs.
      for (const event of events) await audit.record(caller, event);
      return after;
    },

    /** Each user's and embed user's tokens in `month` (default: the current one by the app's clock), most first. */
    async usage(caller: Caller, query: { month?: string }): Promise<AiUsage> {
      caller.access.requireAdmin('read the AI usage');
      const tenantId = caller.actor.tenantId;
      const month = query.month ?? monthOf(now);
      const [rows, row] = await Promise.all([listUsage(store.db, tenantId, month), findSettings(store.db, tenantId)]);
      const items = rows
        .map((r) => ({
          userId: r.user_id,
          embedUserId: r.embed_user_id,
          promptTokens: Number(r.prompt_tokens),
          completionTokens: Number(r.completion_tokens),
          answers: r.answers,
        }))
        .sort((a, b) => b.promptTokens + b.completionTokens - (a.promptTokens + a.completionTokens));
      return { month, limit: limitsOf(row).tokensPerUserPerMonth, items };
    },
  };

  /** What AI features call, by tenant (no caller: an embed user's request, a job). */
  const ai = {
    /** The client of the account's provider (its own, else the server's) and its limits; null: no provider is configured. */
    async clientFor(tenantId: number): Promise<{ client: ModelClient; limits: AiLimits } | null> {
      const row = await findSettings(store.db, tenantId);
      const client = clientOf(row, tenantId);
      return client === null ? null : { client, limits: limitsOf(row) };
    },

    /** The account's switch (default off): what an embed session's `allowAi` inherits when neither the session nor the embed settings say. */
    async enabled(tenantId: number): Promise<boolean> {
      const row = await findSettings(store.db, tenantId);
      return row === undefined ? AI_DEFAULTS.enabled : row.enabled === 1;
    },

    /** Throws 429 AI_BUDGET_EXCEEDED when `who` has spent the month's budget (tokensPerUserPerMonth); no budget, no check. */
    async checkBudget(tenantId: number, who: Spender): Promise<void> {
      const budget = limitsOf(await findSettings(store.db, tenantId)).tokensPerUserPerMonth;
      if (budget === null) return;
      const month = monthOf(now);
      const usage = await findUsage(store.db, tenantId, month, who);
      const used = usage === undefined ? 0 : Number(usage.prompt_tokens) + Number(usage.completion_tokens);
      if (used < budget) return;
      const whom = 'userId' in who ? `User ${who.userId}` : `Embed user ${who.embedUserId}`;
      throw new ApiError(
        'AI_BUDGET_EXCEEDED',
        `${whom} has used ${used} tokens in ${month}, and the account's budget is ${budget} tokens per user a month (tokensPerUserPerMonth); it renews on ${nextMonth(month)} (UTC).`,
      );
    },

    /** Adds one answer's tokens to `who`'s month (the app's clock). */
    async recordUsage(tenantId: number, who: Spender, usage: { promptTokens: number; completionTokens: number }): Promise<void> {
      const clean = (n: number) => (Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);
      await addUsage(
        store.db,
        tenantId,
        monthOf(now),
        who,
        { promptTokens: clean(usage.promptTokens), completionTokens: clean(usage.completionTokens) },
        timestamp(now),
      );
    },
  };

  return { settings, ai };
}
export type AiSettingsService = ReturnType<typeof aiSettingsService>['settings'];
/** What AI features use of the account's AI settings (`use(aiSettingsArea).ai`). */
export type AiService = ReturnType<typeof aiSettingsService>['ai'];
