import { ApiError } from '../shared/problems.js';

/**
 * Spec, Authentication 4: a key scoped to some deployments gets 403 for a request whose path
 * targets any other. Runs right after authentication, before the body is parsed.
 */
export function checkKeyScope(scope: number[] | null, params: unknown): void {
  if (scope === null) return;
  const raw = (params as { deploymentId?: unknown } | undefined)?.deploymentId;
  if (raw === undefined) return;
  const id = Number(raw);
  if (!scope.includes(id)) {
    throw new ApiError('KEY_SCOPE_FORBIDDEN', `This API key is scoped to deployments ${scope.join(', ') || '(none)'} and cannot act on deployment ${String(raw)}.`);
  }
}

/** Account-wide actions need an unscoped key; see AccessContext.requireAccountAdmin. */
export function requireUnscopedKey(scope: number[] | null, action: string): void {
  if (scope !== null) {
    throw new ApiError('KEY_SCOPE_FORBIDDEN', `This API key is scoped to deployments ${scope.join(', ') || '(none)'}; use an unscoped key to ${action}.`);
  }
}
