import { setTimeout as delay } from 'node:timers/promises';
import OpenAI, { APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { OutboundError, type Outbound } from '../outbound/index.js';

/** One message of a conversation, in the product's words (the provider's wire shape is the client's business). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  toolCallId?: string;
}

/** A function the model may call; `parameters` is its arguments' JSON Schema. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown> /* JSON Schema */;
}

/**
 * What an answer streams: text as it comes, each tool call once it is whole (its pieces
 * assembled), and `done` last, with the tokens the provider counted and why it stopped.
 */
export type ChatEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool-call'; id: string; name: string; arguments: string }
  | { type: 'done'; usage: { promptTokens: number; completionTokens: number }; finishReason: string | null };

export interface ModelClient {
  chat(request: { messages: ChatMessage[]; tools?: ToolSpec[]; maxTokens?: number; signal?: AbortSignal }): AsyncIterable<ChatEvent>;
}

export type ModelProviderFailure = 'unreachable' | 'timeout' | 'refused' | 'rate-limited' | 'bad-answer';

/**
 * A provider that gave no usable answer: not reached, too slow, refused (by this server's address
 * guard, or by the provider: 4xx), rate-limited, or an answer that was not what the protocol says.
 * The message names the provider's origin and path, never its key or the conversation.
 */
export class ModelProviderError extends Error {
  constructor(
    readonly kind: ModelProviderFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ModelProviderError';
  }
}

export interface ModelClientOptions {
  /** The provider's API root, such as https://api.openai.com/v1 or http://127.0.0.1:8080/v1 (chat/completions is under it). */
  baseUrl: string;
  model: string;
  /** Empty for local servers that ask for none. */
  apiKey: string;
  /** The outbound service the calls go through: its address guard and timeouts. */
  outbound: Pick<Outbound, 'fetch'>;
  /** The longest one answer may take, first byte to last, retries included (ms; default 120 s). */
  deadlineMs?: number;
  /** Attempts after the first when the provider is unreachable, 429 or 5xx, only before the answer's first byte (default 2). */
  retries?: number;
  /** The first wait between attempts (ms; doubles each time, with jitter; default 500). */
  retryBaseMs?: number;
}

/** The answer's tokens when a provider sends no usage (some local servers): counted as none rather than guessed. */
const NO_USAGE = { promptTokens: 0, completionTokens: 0 };

/**
 * The one client every AI feature calls a model provider with: OpenAI's chat-completions protocol,
 * which hosted services and local servers (llama.cpp, vLLM, Ollama) all speak, through the `openai`
 * package with the server's outbound fetch, so the address guard and timeouts hold for every call.
 */
export function createModelClient(options: ModelClientOptions): ModelClient {
  const root = options.baseUrl.replace(/\/+$/, '');
  const where = describe(root);
  const deadlineMs = options.deadlineMs ?? 120_000;
  const retries = options.retries ?? 2;
  const retryBaseMs = options.retryBaseMs ?? 500;
  const openai = new OpenAI({
    baseURL: root,
    // The package refuses an empty key; local servers take any.
    apiKey: options.apiKey === '' ? 'none' : options.apiKey,
    fetch: options.outbound.fetch as never,
    // Retries are this client's own (below), so that a refused address is never retried and
    // nothing is retried once the answer has begun.
    maxRetries: 0,
    timeout: deadlineMs,
  });

  return {
    async *chat(request) {
      const deadline = AbortSignal.timeout(deadlineMs);
      const signal = request.signal === undefined ? deadline : AbortSignal.any([deadline, request.signal]);
      const body = {
        model: options.model,
        messages: request.messages.map(toWire),
        ...(request.tools && request.tools.length > 0
          ? {
              tools: request.tools.map((t): ChatCompletionTool => ({
                type: 'function',
                function: { name: t.name, description: t.description, parameters: t.parameters },
              })),
            }
          : {}),
        ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
        stream: true as const,
        stream_options: { include_usage: true },
      };

      let stream: AsyncIterable<ChatCompletionChunk>;
      for (let attempt = 1; ; attempt++) {
        try {
          stream = await openai.chat.completions.create(body, { signal });
          break;
        } catch (error) {
          const failure = classify(error, where, deadline, deadlineMs);
          if (request.signal?.aborted) throw request.signal.reason ?? error;
          const retryable = failure.kind === 'unreachable' || failure.kind === 'rate-limited' || (failure.status !== undefined && failure.status >= 500);
          if (!retryable || attempt > retries) throw failure;
          const wait = retryBaseMs * 2 ** (attempt - 1);
          try {
            await delay(wait / 2 + Math.random() * (wait / 2), undefined, { signal });
          } catch {
            if (request.signal?.aborted) throw request.signal.reason ?? failure;
            throw classify(new APIUserAbortError(), where, deadline, deadlineMs);
          }
        }
      }

      // Tool calls come in pieces keyed by index: the id and name first, the arguments in slices.
      const calls = new Map<number, { id: string; name: string; arguments: string }>();
      let usage = NO_USAGE;
      let finishReason: string | null = null;
      try {
        for await (const chunk of stream) {
          if (chunk.usage) usage = { promptTokens: chunk.usage.prompt_tokens ?? 0, completionTokens: chunk.usage.completion_tokens ?? 0 };
          for (const choice of chunk.choices ?? []) {
            if (choice.index !== 0) continue;
            const delta = choice.delta ?? {};
            if (typeof delta.content === 'string' && delta.content !== '') yield { type: 'text', delta: delta.content };
            for (const piece of delta.tool_calls ?? []) {
              const call = calls.get(piece.index) ?? { id: '', name: '', arguments: '' };
              if (piece.id) call.id = piece.id;
              if (piece.function?.name) call.name += piece.function.name;
              if (piece.function?.arguments) call.arguments += piece.function.arguments;
              calls.set(piece.index, call);
            }
            if (choice.finish_reason) finishReason = choice.finish_reason;
          }
        }
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason ?? error;
        throw classify(error, where, deadline, deadlineMs);
      }
      // The package ends a stream quietly when its signal aborts: a cut-off answer is not a whole one.
      if (request.signal?.aborted) throw request.signal.reason ?? new Error('aborted');
      if (deadline.aborted) throw classify(new APIUserAbortError(), where, deadline, deadlineMs);
      for (const [index, call] of [...calls.entries()].sort(([a], [b]) => a - b)) {
        if (call.name === '') throw new ModelProviderError('bad-answer', `${where} streamed a tool call without a name`);
        yield { type: 'tool-call', id: call.id === '' ? `call_${index}` : call.id, name: call.name, arguments: call.arguments === '' ? '{}' : call.arguments };
      }
      yield { type: 'done', usage, finishReason };
    },
  };
}

function toWire(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content ?? '' };
    case 'user':
      return { role: 'user', content: message.content ?? '' };
    case 'tool':
      return { role: 'tool', content: message.content ?? '', tool_call_id: message.toolCallId ?? '' };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls && message.toolCalls.length > 0
          ? { tool_calls: message.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) }
          : {}),
      };
  }
}

/** `https://host/path`: what messages may show of the provider's address. */
function describe(root: string): string {
  try {
    const url = new URL(root);
    return `${url.protocol}//${url.host}${url.pathname}`.replace(/\/+$/, '');
  } catch {
    return 'the model provider';
  }
}

/** Whether undici gave up waiting (for the headers, or between two chunks of a streamed body). */
function timedOut(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.includes('TIMEOUT')) return true;
  }
  return false;
}

function outboundIn(error: unknown): OutboundError | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) if (e instanceof OutboundError) return e;
  return undefined;
}

/** Whatever went wrong, as the one error callers handle. */
function classify(error: unknown, where: string, deadline: AbortSignal, deadlineMs: number): ModelProviderError {
  if (error instanceof ModelProviderError) return error;
  if (deadline.aborted || error instanceof APIConnectionTimeoutError)
    return new ModelProviderError('timeout', `The model provider at ${where} did not finish its answer within ${deadlineMs} ms.`);
  if (timedOut(error)) return new ModelProviderError('timeout', `The model provider at ${where} did not answer in time (it paused mid-answer).`);
  const outbound = outboundIn(error);
  if (outbound !== undefined) {
    if (outbound.kind === 'refused') return new ModelProviderError('refused', `The model provider at ${where} may not be called: ${outbound.message}.`);
    if (outbound.kind === 'timeout') return new ModelProviderError('timeout', `The model provider at ${where} did not answer in time.`);
    if (outbound.kind === 'bad-url')
      return new ModelProviderError('refused', `The model provider's address ${where} is not one this server calls: ${outbound.message}.`);
    return new ModelProviderError('unreachable', `The model provider at ${where} could not be reached (${outbound.message}).`);
  }
  if (error instanceof APIError && error.status !== undefined) {
    const status = error.status;
    if (status === 429) return new ModelProviderError('rate-limited', `The model provider at ${where} answered 429: too many requests for now.`, status);
    if (status >= 500) return new ModelProviderError('unreachable', `The model provider at ${where} answered ${status}.`, status);
    return new ModelProviderError('refused', `The model provider at ${where} refused the request with ${status}${providerMessage(error)}.`, status);
  }
  if (error instanceof APIError && !(error instanceof APIUserAbortError)) {
    // A connection closed before or during the answer, or a body that was not what it said it was.
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof SyntaxError) return new ModelProviderError('bad-answer', `The model provider at ${where} streamed something that is not JSON.`);
    return new ModelProviderError('unreachable', `The model provider at ${where} could not be reached or broke off its answer.`);
  }
  if (error instanceof SyntaxError) return new ModelProviderError('bad-answer', `The model provider at ${where} streamed something that is not JSON.`);
  return new ModelProviderError(
    'unreachable',
    `The model provider at ${where} broke off its answer (${error instanceof Error ? error.name : 'unknown failure'}).`,
  );
}

/** The provider's own message for a refusal (a wrong model name, a bad key), short. */
function providerMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  const text = typeof body?.message === 'string' ? body.message : '';
  return text === '' ? '' : `: ${text.slice(0, 300)}`;
}
