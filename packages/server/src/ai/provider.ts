import type { Masked } from '../mail/index.js';

/**
 * The operator's default model provider (AI_PROVIDER_URL, AI_PROVIDER_MODEL, AI_PROVIDER_API_KEY):
 * what an account without a provider of its own uses. Its host may be private (a local llama.cpp
 * or vLLM is the operator's own choice), so calls to it are allowed past the address guard.
 */
export interface ServerProviderConfig {
  /** The API root, such as https://api.openai.com/v1; chat/completions is under it. */
  baseUrl: string;
  model: string;
  /** Empty for servers that ask for none. */
  apiKey: Masked;
}

/**
 * Why `text` is not a provider's API root, or null: an http(s) URL without credentials, query or
 * fragment, and not the chat-completions URL itself (the client adds that).
 */
export function providerUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials (the key goes apart)';
  if (url.search !== '' || url.hash !== '') return 'must have no query string or fragment';
  if (/\/chat\/completions\/?$/.test(url.pathname)) return 'must be the API root (such as https://api.openai.com/v1), not its /chat/completions URL';
  return null;
}
