import fs from 'node:fs';
import path from 'node:path';
import type { Audit } from '../../audit/index.js';
import type { Executor, OidcTokenConfigRow } from '../../db/tables.js';
import type { PodFiles } from '../../runtime/index.js';
import type { Signing } from '../../signing/index.js';
import { tenantSettingsFromColumn } from '../account/index.js';
import { enabledConfigsOfDeployments, type DeploymentConfigRow } from './oidc-token-configs.store.js';
import { claimsOf, subjectOf, WORKLOAD_TOKEN_RENEW_MS, WORKLOAD_TOKEN_SECONDS } from './workload-tokens.js';

/** A running environment that receives the tenant's workload tokens. */
export interface WorkloadTarget {
  tenantId: number;
  deploymentId: number;
  environmentId: string;
}

/** Where Google's client libraries exchange the token (an external-account credential file). */
const GCP_STS = 'https://sts.googleapis.com/v1/token';

/** Replaces `file` with `content` in one rename, so a reader never sees half a token. */
function writeAtomically(file: string, content: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, content, { mode: 0o600 });
  fs.renameSync(temporary, file);
}

/**
 * The files workload identity gives each running environment (reference 5.14-5.18): per enabled
 * config, a token signed by the tenant's `workload` keys (RS256), living an hour and replaced after
 * half of it, with the variables the cloud SDKs read. Only while the tenant's `oidcEnabled` is on:
 * without the issuer's discovery document no cloud could verify them.
 */
export function workloadFiles(db: Executor, signing: Signing, audit: Audit) {
  function filesOf(target: WorkloadTarget, slug: string, region: string, configs: OidcTokenConfigRow[]): PodFiles {
    const who = { deploymentId: target.deploymentId, region, environment: target.environmentId };
    return {
      // A new, removed, renamed or re-targeted config changes the variables: the pod is replaced.
      revision: configs.map((c) => `${c.id}:${c.audience_type}:${c.name}:${c.target_env_var ?? ''}`).join(','),
      // New claims, subject or audience: written again at once, without a restart.
      contentRevision: configs.map((c) => `${c.id}@${c.updated_at}`).join(','),
      async write(dir: string) {
        const env: Record<string, string> = {};
        for (const config of configs) {
          const file = path.join(dir, `${config.name}.jwt`);
          const signed = await signing.sign({ id: target.tenantId, slug }, claimsOf(config, who), {
            purpose: 'workload',
            audience: config.audience,
            subject: subjectOf(config, who),
            expiresInSeconds: WORKLOAD_TOKEN_SECONDS,
          });
          writeAtomically(file, signed.token);
          await audit.recordFor(
            target.tenantId,
            { userId: null, email: null, credentialKind: 'workload-identity', credentialId: null },
            {
              action: 'workload-token.issued',
              target: { deploymentId: target.deploymentId, environmentId: target.environmentId, configId: config.id },
              details: { audience: config.audience, jti: signed.jti, expiresAt: signed.expiresAt.toISOString() },
            },
          );
          if (config.audience_type === 'AWS') env.AWS_WEB_IDENTITY_TOKEN_FILE = file;
          else if (config.audience_type === 'Azure') env.AZURE_FEDERATED_TOKEN_FILE = file;
          else if (config.audience_type === 'GCP') {
            const credentials = path.join(dir, `${config.name}.credentials.json`);
            const audience = config.audience.startsWith('https:') ? config.audience.slice('https:'.length) : config.audience;
            writeAtomically(
              credentials,
              JSON.stringify(
                {
                  type: 'external_account',
                  audience,
                  subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
                  token_url: GCP_STS,
                  credential_source: { file, format: { type: 'text' } },
                },
                null,
                2,
              ),
            );
            env.GOOGLE_APPLICATION_CREDENTIALS = credentials;
          } else if (config.target_env_var !== null) env[config.target_env_var] = file;
        }
        return { env, refreshAt: Date.now() + WORKLOAD_TOKEN_SECONDS * 1000 - WORKLOAD_TOKEN_RENEW_MS };
      },
    };
  }

  /**
   * The files of each target whose tenant issues workload tokens, keyed `<deploymentId>/<environmentId>`:
   * one statement per tick for every target (the planner calls this on each tick).
   */
  return async (targets: WorkloadTarget[]): Promise<Map<string, PodFiles>> => {
    const files = new Map<string, PodFiles>();
    const byDeployment = new Map<number, DeploymentConfigRow[]>();
    for (const row of await enabledConfigsOfDeployments(db, [...new Set(targets.map((t) => t.deploymentId))])) {
      // Without the issuer's discovery document (oidcEnabled) no cloud could verify the tokens.
      if (!tenantSettingsFromColumn(row.account_settings, row.tenant_created_at).oidcEnabled) continue;
      byDeployment.set(row.deployment_id, [...(byDeployment.get(row.deployment_id) ?? []), row]);
    }
    for (const target of targets) {
      const mine = byDeployment.get(target.deploymentId)?.filter((row) => row.tenant_id === target.tenantId);
      if (!mine?.length) continue;
      const { tenant_slug: slug, region } = mine[0]!;
      files.set(`${target.deploymentId}/${target.environmentId}`, filesOf(target, slug, region, mine));
    }
    return files;
  };
}
export type WorkloadFilesFor = ReturnType<typeof workloadFiles>;
