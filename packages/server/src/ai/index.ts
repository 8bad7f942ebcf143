/**
 * The model client every AI feature calls a provider with (OpenAI-compatible chat completions,
 * streamed, through the outbound service). Knows no area: the account's AI settings decide which
 * provider a tenant's features use (areas/ai-settings).
 *
 * @example
 *   const client = createModelClient({ baseUrl: 'http://127.0.0.1:8080/v1', model: 'qwen', apiKey: '', outbound });
 *   for await (const event of client.chat({ messages: [{ role: 'user', content: 'Hello' }] })) …
 */
export {
  ModelProviderError,
  createModelClient,
  type ChatEvent,
  type ChatMessage,
  type ModelClient,
  type ModelClientOptions,
  type ModelProviderFailure,
  type ToolSpec,
} from './model-client.js';
export { providerUrlProblem, type ServerProviderConfig } from './provider.js';
