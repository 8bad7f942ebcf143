import type { OidcTokenConfigRow } from '../../db/tables.js';

/** Claims the platform sets on every workload token; custom claims never override them (5.15). */
export const REGISTERED_CLAIMS = ['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'jti'];
/** The platform's own claims are named `mapi:<name>`; custom claims may not use the prefix. */
export const RESERVED_CLAIM_PREFIX = 'mapi:';

/** What cloud SDKs read to find their federated token, set by the runtime (custom targets may not take them). */
export const RUNTIME_ENV_VARS = ['AWS_WEB_IDENTITY_TOKEN_FILE', 'AZURE_FEDERATED_TOKEN_FILE', 'GOOGLE_APPLICATION_CREDENTIALS'];

/** How long a workload token lives (reference 5.14: 1 hour), and how long before its end a new one replaces it. */
export const WORKLOAD_TOKEN_SECONDS = 3_600;
export const WORKLOAD_TOKEN_RENEW_MS = 30 * 60_000;

export const DEFAULT_SUB_FORMAT = 'mapi:deployment:{deployment_id}';

/** The runtime component the tokens are minted for: the deployment's API pods (`{component}`). */
export const COMPONENT = 'api';

export interface WorkloadSubject {
  /** Null for a token minted at tenant level (`{deployment_id}` → `global`). */
  deploymentId: number | null;
  /** Null outside a deployment (`{region}` → `control-plane`). */
  region: string | null;
  environment: string | null;
}

/** The `sub` of a config's token for one workload (placeholders of 5.15). */
export function subjectOf(config: Pick<OidcTokenConfigRow, 'sub_format'>, who: WorkloadSubject): string {
  return (config.sub_format ?? DEFAULT_SUB_FORMAT).replace(/\{(deployment_id|component|region)\}/g, (_, name: string) =>
    name === 'deployment_id'
      ? who.deploymentId === null
        ? 'global'
        : String(who.deploymentId)
      : name === 'region'
        ? (who.region ?? 'control-plane')
        : COMPONENT,
  );
}

/** The claims of a config's token beside `iss`, `sub`, `aud`, `iat`, `exp` and `jti` (which signing/ sets). */
export function claimsOf(config: Pick<OidcTokenConfigRow, 'custom_claims' | 'name' | 'audience_type'>, who: WorkloadSubject): Record<string, unknown> {
  const custom = config.custom_claims === null ? {} : (JSON.parse(config.custom_claims) as Record<string, unknown>);
  const own: Record<string, unknown> = {
    'mapi:config': config.name,
    'mapi:component': COMPONENT,
    'mapi:deployment_id': who.deploymentId === null ? 'global' : String(who.deploymentId),
    'mapi:region': who.region ?? 'control-plane',
  };
  if (who.environment !== null) own['mapi:environment'] = who.environment;
  // Checked when the config was written; filtered again so no stored claim can ever shadow ours.
  const allowed = Object.entries(custom).filter(([name]) => !REGISTERED_CLAIMS.includes(name) && !name.toLowerCase().startsWith(RESERVED_CLAIM_PREFIX));
  return { ...Object.fromEntries(allowed), ...own };
}
