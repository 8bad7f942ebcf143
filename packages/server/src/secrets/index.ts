/**
 * The secrets service: values encrypted at rest (AES-256-GCM, a key id on each value), the keys
 * they are made with, the start-up check that the configured keys are the database's, and the
 * re-encryption that rotation ends with. It knows nothing of the areas that use it.
 *
 * @example
 *   const secrets = new Secrets((await loadSecretKeys(config.secretKeys)).keys);
 *   const stored = secrets.seal('hunter2', `env-var:${deploymentId}:DB_PASSWORD`);
 *   secrets.open(stored, `env-var:${deploymentId}:DB_PASSWORD`); // 'hunter2'
 */
export { Secrets, SecretsError } from './secrets.js';
export { generateKeyText, loadSecretKeys, parseSecretKeys, SecretKey, SecretKeyError, type LoadedKeys, type SecretKeySource } from './keys.js';
export { checkSecretKeys, reencryptAll, type ReencryptReport, type SecretColumn } from './stored.js';
