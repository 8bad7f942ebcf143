import { ApiError } from './errors.js';
import type { RawClient } from './pagination.js';
import { readServerSentEvents, type ServerSentEvent } from './sse.js';
import type { AgentMessage, ProblemDetails } from './types.js';

/** A cube or view member the agent looked at. */
export interface ChatMember {
  name: string;
  title: string;
  type: 'measure' | 'dimension' | 'segment';
  cube: string;
}

/** One tool call or result behind an answer, as the server streams it. */
export type ChatStep =
  | { kind: 'members'; members: ChatMember[] }
  | { kind: 'query'; query: Record<string, unknown> }
  /** Rows keyed by member, the first of the query's rows; `total` counts them all, `truncated` says fewer were sent. */
  | { kind: 'rows'; columns: string[]; rows: Array<Record<string, unknown>>; total: number; truncated: boolean }
  | { kind: 'chart'; spec: Record<string, unknown> }
  /** A tool call the server refused (not allowed, or over the answer's limits); the answer goes on. */
  | { kind: 'refused'; tool: string; detail: string }
  /** A report (its id) or a workbook's dashboard draft (the workbook's id) the agent saved as the caller. */
  | { kind: 'saved'; what: 'report' | 'dashboard-draft'; id: number; name: string };

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
}

/**
 * An event of a streamed answer: `event` is its name on the wire and `data` its parsed payload.
 * `thread` comes first (the thread to continue with `threadId`), then steps and text as they are
 * made, and one `done` (the stored message) or one `error` (a problem) last.
 */
export type ChatEvent =
  | { event: 'thread'; data: { threadId: string; seq: number } }
  | { event: 'step'; data: ChatStep }
  | { event: 'text'; data: { delta: string } }
  | { event: 'done'; data: { message: AgentMessage; usage: ChatUsage } }
  | { event: 'error'; data: ProblemDetails };

export interface ChatOptions {
  /** Continues this thread; a new thread is started without it. */
  threadId?: string;
  /** Stops the answer: the request is aborted and the iteration rejects with the abort's reason. */
  signal?: AbortSignal;
}

/** The stream ended without its `done` or `error` event: the connection dropped mid-answer. */
export class ChatInterruptedError extends Error {
  override readonly name = 'ChatInterruptedError';
}

const NAMES = new Set<string>(['thread', 'step', 'text', 'done', 'error']);

/** Event names this client knows are typed; others (from a newer server) are skipped. */
function typed(event: ServerSentEvent): ChatEvent | undefined {
  if (!NAMES.has(event.event)) return undefined;
  return { event: event.event, data: JSON.parse(event.data) } as ChatEvent;
}

/**
 * Asks an agent `question`, in a new thread or `threadId`'s, and yields the answer's events as the
 * server streams them. Problems before the answer starts (403 without AI, 404, 429 over the budget,
 * 502 and 503 from the provider) reject with an ApiError; a problem during the answer is its
 * `error` event, the last one. The POST is never retried: the question may have been taken.
 */
export async function* chat(
  api: RawClient,
  deploymentId: number,
  agentId: number,
  question: string,
  options: ChatOptions = {},
): AsyncGenerator<ChatEvent, void, undefined> {
  const init = {
    body: { question },
    headers: { Accept: 'text/event-stream' },
    parseAs: 'stream' as const,
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const result =
    options.threadId === undefined
      ? await api.POST('/api/v1/deployments/{deploymentId}/agents/{agentId}/threads', { params: { path: { deploymentId, agentId } }, ...init })
      : await api.POST('/api/v1/deployments/{deploymentId}/agents/{agentId}/threads/{threadId}/messages', {
          params: { path: { deploymentId, agentId, threadId: options.threadId } },
          ...init,
        });
  if (!result.response.ok) throw ApiError.from(result.response, result.error);
  const body = result.data;
  const type = result.response.headers.get('content-type') ?? '';
  if (!body || !/^text\/event-stream\b/i.test(type)) {
    await body?.cancel().catch(() => undefined);
    throw new ApiError({
      status: result.response.status,
      method: 'POST',
      url: result.response.url,
      body: `expected text/event-stream, got ${type || 'no content type'}`,
    });
  }
  for await (const raw of readServerSentEvents(body)) {
    // Events already read stay unseen after an abort, even from a fetch that does not end its body on one.
    options.signal?.throwIfAborted();
    const event = typed(raw);
    if (!event) continue;
    yield event;
    if (event.event === 'done' || event.event === 'error') return;
  }
  options.signal?.throwIfAborted();
  throw new ChatInterruptedError('The answer stream ended before the answer was done; the connection was lost or the server stopped.');
}
