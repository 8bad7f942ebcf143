import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import { mapUniqueViolation } from '../../db/errors.js';
import { serialized } from '../../db/transactions.js';
import type { OidcTokenConfigRow } from '../../db/tables.js';
import { ApiError, notFound } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import {
  AUDIENCE_TYPES,
  type AudienceType,
  type CreateOidcTokenConfigInput,
  type OidcTokenConfig,
  type UpdateOidcTokenConfigInput,
} from './oidc-token-configs.schemas.js';
import { deleteConfig, findConfig, insertConfig, listConfigs, updateConfig } from './oidc-token-configs.store.js';
import { RESERVED_CLAIM_PREFIX, REGISTERED_CLAIMS, RUNTIME_ENV_VARS } from './workload-tokens.js';

/** The fixed audiences of the well-known clouds (reference 5.15). */
const FIXED_AUDIENCE: Partial<Record<AudienceType, string>> = { AWS: 'sts.amazonaws.com', Azure: 'api://AzureADTokenExchange' };

/** A GCP workload-identity provider, as its token exchange expects the audience. */
const GCP_PROVIDER = /^(?:https:)?\/\/iam\.googleapis\.com\/projects\/\d+\/locations\/global\/workloadIdentityPools\/[a-z0-9-]+\/providers\/[a-z0-9-]+$/;

function invalid(pointer: string, message: string): ApiError {
  return new ApiError('VALIDATION_FAILED', `The request is not valid: ${pointer} ${message}.`, { errors: [{ pointer, message }] });
}

function toConfig(row: OidcTokenConfigRow): OidcTokenConfig {
  return {
    id: row.id,
    audienceType: row.audience_type,
    audience: row.audience,
    name: row.name,
    isEnabled: row.is_enabled === 1,
    customClaims: row.custom_claims === null ? null : (JSON.parse(row.custom_claims) as Record<string, string | string[]>),
    subFormat: row.sub_format,
    targetEnvVar: row.target_env_var,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function audienceOf(type: AudienceType, customAudience: string | null | undefined): string {
  const fixed = FIXED_AUDIENCE[type];
  if (fixed !== undefined) {
    if (customAudience !== undefined && customAudience !== null && customAudience !== fixed)
      throw invalid('/customAudience', `is fixed for ${type} (${fixed}); leave it out`);
    return fixed;
  }
  if (customAudience === undefined || customAudience === null) {
    throw invalid(
      '/customAudience',
      type === 'GCP'
        ? 'is required for GCP: the workload-identity provider, //iam.googleapis.com/projects/<number>/locations/global/workloadIdentityPools/<pool>/providers/<provider>'
        : 'is required for Custom',
    );
  }
  if (type === 'GCP' && !GCP_PROVIDER.test(customAudience)) {
    throw invalid(
      '/customAudience',
      'must name a workload-identity provider: //iam.googleapis.com/projects/<number>/locations/global/workloadIdentityPools/<pool>/providers/<provider>',
    );
  }
  return customAudience;
}

function checkClaims(claims: Record<string, unknown> | null | undefined): void {
  for (const name of Object.keys(claims ?? {})) {
    if (REGISTERED_CLAIMS.includes(name)) throw invalid(`/customClaims/${name}`, 'is a registered claim the platform sets; custom claims cannot override it');
    if (name.toLowerCase().startsWith(RESERVED_CLAIM_PREFIX))
      throw invalid(`/customClaims/${name}`, `is in the platform's reserved namespace (\`${RESERVED_CLAIM_PREFIX}\`)`);
  }
}

function checkTargetEnvVar(type: string, target: string | null | undefined): void {
  if (target === undefined || target === null) return;
  if (type !== 'Custom')
    throw invalid(
      '/targetEnvVar',
      `is for Custom configs only; ${type} tokens go where its SDKs look (${type === 'AWS' ? 'AWS_WEB_IDENTITY_TOKEN_FILE' : type === 'Azure' ? 'AZURE_FEDERATED_TOKEN_FILE' : 'GOOGLE_APPLICATION_CREDENTIALS'})`,
    );
  if (RUNTIME_ENV_VARS.includes(target) || /^(NODE_|LD_|DYLD_|DB_)/.test(target))
    throw invalid('/targetEnvVar', 'is a variable the runtime sets or reads itself');
}

function conflict<T>(type: string, name: string, write: () => Promise<T>): Promise<T> {
  return mapUniqueViolation(
    {
      oidc_token_configs_one_per_cloud: () =>
        new ApiError(
          'OIDC_TOKEN_CONFIG_EXISTS',
          `The tenant already has a ${type} config: one per cloud (Custom configs may be many). Update that one instead.`,
        ),
      oidc_token_configs_name: () =>
        new ApiError('OIDC_TOKEN_CONFIG_EXISTS', `A config named "${name}" already exists: names are the token file names, one per tenant.`),
    },
    write,
  );
}

/**
 * The tenant's workload-identity token configs (reference 5.14-5.18), admin only; writes need an
 * unscoped key, as every tenant-wide setting does. A change reaches the runtimes through the
 * runtime plan: a new, removed, renamed or re-targeted config replaces the pods (their
 * environment changes); new claims or subject are minted into the files at once.
 */
export function oidcTokenConfigsService(store: Store, now: Clock) {
  const { db } = store;
  return {
    async list(caller: Caller): Promise<OidcTokenConfig[]> {
      caller.access.requireAdmin('read OIDC token configs');
      return (await listConfigs(db, caller.actor.tenantId)).map(toConfig);
    },

    async get(caller: Caller, id: number): Promise<OidcTokenConfig> {
      caller.access.requireAdmin('read OIDC token configs');
      const row = await findConfig(db, caller.actor.tenantId, id);
      if (!row) throw notFound('OIDC_TOKEN_CONFIG_NOT_FOUND', 'OIDC token config', id);
      return toConfig(row);
    },

    async create(caller: Caller, input: CreateOidcTokenConfigInput): Promise<OidcTokenConfig> {
      caller.access.requireAccountAdmin('create OIDC token configs');
      const type = input.audienceType as AudienceType;
      if (!AUDIENCE_TYPES.includes(type)) throw invalid('/audienceType', `must be one of ${AUDIENCE_TYPES.join(', ')}`);
      const audience = audienceOf(type, input.customAudience);
      checkClaims(input.customClaims);
      checkTargetEnvVar(type, input.targetEnvVar);
      const at = timestamp(now);
      const name = input.name ?? (type === 'Custom' ? null : type.toLowerCase());
      const fields = {
        audience_type: type,
        audience,
        // A Custom config without a name is named after its id, known once inserted.
        name: name ?? `custom-pending-${at}-${Math.random().toString(36).slice(2)}`,
        sub_format: input.subFormat ?? null,
        custom_claims: input.customClaims === undefined || input.customClaims === null ? null : JSON.stringify(input.customClaims),
        target_env_var: input.targetEnvVar ?? null,
        is_enabled: input.isEnabled === false ? 0 : 1,
        created_at: at,
        updated_at: at,
      };
      const row = await conflict(type, fields.name, () =>
        serialized(store, `oidc-token-configs:${caller.actor.tenantId}`, async (trx) => {
          const inserted = await insertConfig(trx, caller.actor.tenantId, fields);
          if (name !== null) return inserted;
          return (await updateConfig(trx, caller.actor.tenantId, inserted.id, { name: `custom-${inserted.id}` }))!;
        }),
      );
      return toConfig(row);
    },

    async update(caller: Caller, id: number, input: UpdateOidcTokenConfigInput & { audienceType?: unknown }): Promise<OidcTokenConfig> {
      caller.access.requireAccountAdmin('change OIDC token configs');
      const row = await findConfig(db, caller.actor.tenantId, id);
      if (!row) throw notFound('OIDC_TOKEN_CONFIG_NOT_FOUND', 'OIDC token config', id);
      const type = row.audience_type as AudienceType;
      const changes: Partial<OidcTokenConfigRow> = { updated_at: timestamp(now) };
      if (input.customAudience !== undefined) changes.audience = audienceOf(type, input.customAudience);
      if (input.name !== undefined && input.name !== null) changes.name = input.name;
      if (input.subFormat !== undefined) changes.sub_format = input.subFormat;
      if (input.customClaims !== undefined) {
        checkClaims(input.customClaims);
        changes.custom_claims = input.customClaims === null ? null : JSON.stringify(input.customClaims);
      }
      if (input.targetEnvVar !== undefined) {
        checkTargetEnvVar(type, input.targetEnvVar);
        changes.target_env_var = input.targetEnvVar;
      }
      if (input.isEnabled !== undefined && input.isEnabled !== null) changes.is_enabled = input.isEnabled ? 1 : 0;
      const updated = await conflict(type, changes.name ?? row.name, () => updateConfig(db, caller.actor.tenantId, id, changes));
      if (!updated) throw notFound('OIDC_TOKEN_CONFIG_NOT_FOUND', 'OIDC token config', id);
      return toConfig(updated);
    },

    async remove(caller: Caller, id: number): Promise<Record<string, never>> {
      caller.access.requireAccountAdmin('delete OIDC token configs');
      if (!(await deleteConfig(db, caller.actor.tenantId, id))) throw notFound('OIDC_TOKEN_CONFIG_NOT_FOUND', 'OIDC token config', id);
      return {};
    },
  };
}
export type OidcTokenConfigsService = ReturnType<typeof oidcTokenConfigsService>;
