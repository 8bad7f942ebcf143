/**
 * The deployment scope of an OAuth grant, carried in its OAuth `scope`: `deployments:12
 * deployments:13` limits the token to those deployments, exactly as an API key's `deploymentIds`;
 * no `deployments:` value (or `deployments:all`) means every deployment the user can reach.
 */
const ONE = /^deployments:([1-9][0-9]{0,15})$/;
export const ALL_DEPLOYMENTS = 'deployments:all';

/** The deployments a scope string names, or null for all of them. */
export function deploymentsOf(scope: string | undefined): number[] | null {
  const ids = new Set<number>();
  for (const value of (scope ?? '').split(' ')) {
    const match = ONE.exec(value);
    if (match) ids.add(Number(match[1]));
  }
  return ids.size === 0 ? null : [...ids].sort((a, b) => a - b);
}

/** The scope values this server grants out of those requested: deployment scopes and `offline_access`. */
export function grantableScope(requested: string | undefined): string {
  const kept = (requested ?? '').split(' ').filter((value) => value === 'offline_access' || value === ALL_DEPLOYMENTS || ONE.test(value));
  const ids = deploymentsOf(requested);
  // A request naming some deployments and also "all" is limited to those named.
  return [...new Set(kept.filter((value) => !(ids !== null && value === ALL_DEPLOYMENTS)))].join(' ');
}

export function scopeFor(ids: number[] | null): string {
  return ids === null ? ALL_DEPLOYMENTS : ids.map((id) => `deployments:${id}`).join(' ');
}

/** The authorization request's parameter that carries the deployment scope an app asked for (oauth.provider.ts). */
export const DEPLOYMENTS_PARAM = 'mapi_deployments';

/** The deployment values of a requested scope: `deployments:<id>` values, else `deployments:all`. */
export function requestedDeployments(scope: string | undefined): string[] {
  const values = grantableScope(scope)
    .split(' ')
    .filter((value) => value !== '' && value !== 'offline_access');
  return values.length === 0 ? [ALL_DEPLOYMENTS] : values;
}
