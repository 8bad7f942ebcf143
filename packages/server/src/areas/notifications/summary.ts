import type { Masked } from '../../mail/index.js';
import { Outbound, OutboundError } from '../../outbound/index.js';

/**
 * "What changed since last time" for `notificationAiSummary`: the data of a recipient's two latest
 * renders sent to an OpenAI-compatible chat-completions endpoint (NOTIFICATION_SUMMARY_URL), and
 * its short answer put in the mail. The call goes through the outbound service, whose guard allows
 * the summariser's own host (it may be private, configured by the operator) and nothing more.
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

export interface Summariser {
  /** A few sentences on what changed from `previous` to `current` (both from boundedRenderData). */
  summarise(title: string, previous: string, current: string): Promise<string>;
  close(): Promise<void>;
}

export function createSummariser(config: SummariserConfig, options: { timeoutMs?: number } = {}): Summariser {
  const outbound = new Outbound({ allowPrivate: [new URL(config.url).hostname], retries: 0, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) });
  return {
    async summarise(title, previous, current) {
      const body = JSON.stringify({
        model: config.model,
        temperature: 0,
        max_tokens: 300,
        messages: [
          {
            role: 'system',
            content:
              'You write the opening of a scheduled dashboard email: two or three plain sentences on what changed between the previous and the current data of the dashboard. Figures only from the data; no greeting, no markdown.',
          },
          { role: 'user', content: `Dashboard: ${title}\n\nPrevious data (JSON):\n${previous}\n\nCurrent data (JSON):\n${current}` },
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
