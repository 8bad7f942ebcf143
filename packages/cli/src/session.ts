import { refreshTokens, type MapiClient } from '@mapi/client';
import { fetchTrusting } from '@mapi/client';
import { UsageError } from './errors.js';
import { saveProfile, type Profile } from './profile.js';

/** A token this close to its expiry is refreshed before it is sent. */
const MARGIN_MS = 60_000;

/**
 * A profile saved by `mapi login --device` holds an access token and a refresh token: before a
 * request, an access token that has expired (or is about to) is refreshed, and the new pair is
 * saved at once (the old refresh token is spent: refresh tokens rotate).
 */
export function refreshingSession(client: MapiClient, options: { file: string; name: string; profile: Profile; ca?: string }): void {
  let current = options.profile;
  let refreshing: Promise<string> | null = null;
  async function token(): Promise<string> {
    if (current.tokenExpiresAt !== undefined && Date.parse(current.tokenExpiresAt) - MARGIN_MS > Date.now()) return current.token;
    refreshing ??= (async () => {
      try {
        const tokens = await refreshTokens({
          baseUrl: current.url,
          refreshToken: current.refreshToken ?? '',
          ...(options.ca ? { fetch: fetchTrusting(options.ca) } : {}),
        });
        current = {
          ...current,
          token: tokens.accessToken,
          tokenExpiresAt: tokens.expiresAt,
          ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
        };
        saveProfile(options.file, options.name, current);
        return current.token;
      } catch (error) {
        const again = options.name === 'default' ? 'mapi login --device' : `mapi login --device --profile ${options.name}`;
        throw new UsageError(
          `The sign-in saved in profile "${options.name}" could not be refreshed: ${(error as Error).message}.`,
          `Sign in again with \`${again}\`.`,
        );
      } finally {
        refreshing = null;
      }
    })();
    return refreshing;
  }
  client.use({
    async onRequest({ request }) {
      request.headers.set('authorization', `Bearer ${await token()}`);
      return request;
    },
  });
}
