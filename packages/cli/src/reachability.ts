import type { RetryOptions } from '@mapi/client';
import { errorCode, UNREACHABLE_CODES, unreachableNotice } from './errors.js';

/**
 * Retry settings that say once, on stderr, that the server cannot be reached: the client retries
 * network errors for several seconds, which without a word looks like a hang. Only errors that
 * mean "nothing answers there" count; a 503 from a reachable server is not news of that kind.
 */
export function announceUnreachable(url: string, stream: NodeJS.WritableStream = process.stderr): RetryOptions {
  let announced = false;
  return {
    onRetry: ({ error }) => {
      if (announced || error === undefined) return;
      const code = errorCode(error);
      if (!code || !UNREACHABLE_CODES.has(code)) return;
      announced = true;
      stream.write(`${unreachableNotice(url, error)}\n`);
    },
  };
}
