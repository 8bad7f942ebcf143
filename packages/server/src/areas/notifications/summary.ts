import type { ModelClient } from '../../ai/index.js';
import type { Masked } from '../../mail/index.js';
import { Outbound, OutboundError } from '../../outbound/index.js';

/**
 * "What changed since last time" for `notificationAiSummary`: the data of a recipient's two latest
 * renders sent to a model, and its short answer put in the mail. The model is the account's (its
 * AI settings, when AI is on and a provider is configured: docs/api/ai-settings.md), else the
 * server's summariser (NOTIFICATION_SUMMARY_URL, an OpenAI-compatible chat-completions endpoint).
 * Calls to the latter go through an outbound service whose guard allows its own host (it may be
 * private, configured by the operator) and nothing more.
 */

export interface SummariserConfig {
  /** The chat-completions URL, such as https://api.openai.com/v1/chat/completions. */
  url: string;
  apiKey: Masked;
  model: string;
}

/** A render's data as kept for the next summary: each widget's rows, in the dashboard's order. */
export type RenderData = Array<{ widgetId: string; reportId: number; rows: Array<Record<string, unknown>> }>;

/** The most characters of render data kept or sent per render: summaries need the figures, not every row. */
export const RENDER_DATA_LIMIT = 16_000;

/** A render's data as JSON no longer than RENDER_DATA_LIMIT: rows are dropped from the end of each widget until it fits. */
export function boundedRenderData(data: RenderData): string {
  let rowsPerWidget = Math.max(0, ...data.map((d) => d.rows.length));
  for (;;) {
    const text = JSON.stringify(data.map((d) => ({ ...d, rows: d.rows.slice(0, rowsPerWidget) })));
    if (text.length <= RENDER_DATA_LIMIT || rowsPerWidget === 0) return text.slice(0, RENDER_DATA_LIMIT);
    rowsPerWidget = Math.floor(rowsPerWidget / 2);
  }
}

/** Whose AI usage a summary counts as: the recipient it is written for (a user or an embed user); null: nobody's (a Slack channel). */
export type SummaryReader = { userId: number } | { embedUserId: number } | null;

export interface Summariser {
  /** Whether the tenant's summaries have a writer: its AI provider, or NOTIFICATION_SUMMARY_URL. */
  available(tenantId: number): Promise<boolean>;
  /**
   * A few sentences on what changed from `previous` to `current` (both from boundedRenderData).
   * Written by the account's model, it counts in `reader`'s month of usage and is refused once
   * their budget is spent, as their own answers are.
   */
  summarise(tenantId: number, title: string, previous: string, current: string, reader?: SummaryReader): Promise<string>;
  close(): Promise<void>;
}

/** The writer behind NOTIFICATION_SUMMARY_URL: the same for every tenant. */
export interface UrlSummariser {
  summarise(title: string, previous: string, current: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * The account's model for summaries (areas/ai-settings): null when AI is off for it or no provider
 * is configured. `checkBudget` throws when the reader's month is spent; `recordUsage` counts one summary.
 */
export type AccountModel = (tenantId: number) => Promise<{
  client: ModelClient;
  maxTokensPerAnswer: number;
  checkBudget(reader: NonNullable<SummaryReader>): Promise<void>;
  recordUsage(reader: NonNullable<SummaryReader>, usage: { promptTokens: number; completionTokens: number }): Promise<void>;
} | null>;

const INSTRUCTION =
  'You write the opening of a scheduled dashboard email: two or three plain sentences on what changed between the previous and the current data of the dashboard. Figures only from the data; no greeting, no markdown.';
const promptOf = (title: string, previous: string, current: string) =>
  `Dashboard: ${title}\n\nPrevious data (JSON):\n${previous}\n\nCurrent data (JSON):\n${current}`;
/** A summary is two or three sentences; more tokens would only be spent on what the mail cuts. */
const SUMMARY_MAX_TOKENS = 300;

/**
 * The summariser deliveries use: the account's model when it has one, else the server's
 * (NOTIFICATION_SUMMARY_URL, which stays the fallback), else none (`available` says false).
 */
export function createAccountSummariser(accountModel: AccountModel, fallback: UrlSummariser | null): Summariser {
  return {
    async available(tenantId) {
      return fallback !== null || (await accountModel(tenantId)) !== null;
    },
    async summarise(tenantId, title, previous, current, reader = null) {
      const model = await accountModel(tenantId);
      if (model === null) {
        if (fallback === null) throw new Error('no summariser is configured');
        return fallback.summarise(title, previous, current);
      }
      if (reader !== null) await model.checkBudget(reader);
      let text = '';
      let usage: { promptTokens: number; completionTokens: number } | null = null;
      try {
        for await (const event of model.client.chat({
          messages: [
            { role: 'system', content: INSTRUCTION },
            { role: 'user', content: promptOf(title, previous, current) },
          ],
          maxTokens: Math.min(SUMMARY_MAX_TOKENS, model.maxTokensPerAnswer),
        })) {
          if (event.type === 'text') text += event.delta;
          else if (event.type === 'done') usage = event.usage;
        }
      } catch (error) {
        throw new Error(`the account's model provider failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      if (reader !== null && usage !== null) await model.recordUsage(reader, usage);
      if (text.trim() === '') throw new Error('the account’s model answered no text');
      return text.trim().slice(0, 2_000);
    },
    close: async () => {
      await fallback?.close();
    },
  };
}

export function createSummariser(config: SummariserConfig, options: { timeoutMs?: number } = {}): UrlSummariser {
  const outbound = new Outbound({ allowPrivate: [new URL(config.url).hostname], retries: 0, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) });
  return {
    async summarise(title, previous, current) {
      const body = JSON.stringify({
        model: config.model,
        temperature: 0,
        max_tokens: SUMMARY_MAX_TOKENS,
        messages: [
          { role: 'system', content: INSTRUCTION },
          { role: 'user', content: promptOf(title, previous, current) },
        ],
      });
      let response;
      try {
        response = await outbound.request(config.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${config.apiKey.reveal()}` },
          body,
        });
      } catch (error) {
        throw new Error(`the summariser could not be reached: ${error instanceof OutboundError ? error.message : String(error)}`, { cause: error });
      }
      if (response.status !== 200) throw new Error(`the summariser answered ${response.status}`);
      let text: unknown;
      try {
        text = (JSON.parse(response.body) as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message?.content;
      } catch {
        text = undefined;
      }
      if (typeof text !== 'string' || text.trim() === '') throw new Error('the summariser’s answer held no text (choices[0].message.content)');
      return text.trim().slice(0, 2_000);
    },
    close: () => outbound.close(),
  };
}
