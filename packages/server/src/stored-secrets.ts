import { envVarSecretColumn } from './areas/env-vars/env-vars.store.js';
import { environmentTokenSecretColumn } from './areas/tokens/tokens.store.js';
import { signingKeySecretColumn } from './signing/index.js';
import { runtimeSecretColumn } from './runtime/index.js';
import { oauthSecretColumns } from './areas/oauth-integrations/oauth-integrations.store.js';
import { oauthSecretColumn } from './areas/oauth/oauth.adapter.js';
import { identityProviderSecretColumns } from './areas/identity-provider/identity-provider.store.js';
import { dbtSyncSecretColumn } from './areas/dbt-sync/settings.store.js';
import { gitHostSecretColumns } from './areas/git-host/git-host.store.js';
import { aiSettingsSecretColumn } from './areas/ai-settings/ai-settings.store.js';
import type { Store } from './db/database.js';
import { checkSecretKeys, loadSecretKeys, Secrets, type SecretColumn, type SecretKeySource } from './secrets/index.js';

/**
 * Every column that holds values encrypted by secrets/. The start-up check counts the values
 * under keys that are no longer configured in them, and `secrets re-encrypt` walks them all; an
 * area that stores a new kind of secret adds its column here.
 */
export const SECRET_COLUMNS: readonly SecretColumn[] = [
  envVarSecretColumn,
  signingKeySecretColumn,
  environmentTokenSecretColumn,
  runtimeSecretColumn,
  ...oauthSecretColumns,
  oauthSecretColumn,
  ...identityProviderSecretColumns,
  dbtSyncSecretColumn,
  ...gitHostSecretColumns,
  aiSettingsSecretColumn,
];

/** The configured keys, checked against the store's values (throws SecretKeyError saying what to fix). */
export async function openSecrets(store: Store, source: SecretKeySource): Promise<Secrets> {
  const loaded = await loadSecretKeys(source);
  const secrets = new Secrets(loaded.keys, loaded.origin);
  await checkSecretKeys(store.db, secrets, SECRET_COLUMNS);
  return secrets;
}
