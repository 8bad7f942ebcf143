import { ApiError } from '../shared/problems.js';

/**
 * Spec, Authentication 4: a key scoped to some deployments gets 403 for a request whose path
 * targets any other. Runs right after authentication, before the body is parsed.
 */
export function checkKeyScope(scope: number[] | null, params: unknown): void {
  if (scope === null) return;
  const raw = (params as { deploymentId?: unknown } | undefined)?.deploymentId;
  if (raw === undefined) return;
  // Only the canonical spelling can match: `01`, `1.0` or `0x1` are never read as deployment 1
  // here, whatever validation later makes of them.
  const id = typeof raw === 'string' && /^[1-9][0-9]*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!scope.includes(id)) {
    throw new ApiError(
      'KEY_SCOPE_FORBIDDEN',
      `This API key is scoped to deployments ${scope.join(', ') || '(none)'} and cannot act on deployment ${String(raw)}.`,
    );
  }
}

/** Account-wide actions need an unscoped key; see AccessContext.requireAccountAdmin. */
export function requireUnscopedKey(scope: number[] | null, action: string): void {
  if (scope !== null) {
    throw new ApiError('KEY_SCOPE_FORBIDDEN', `This API key is scoped to deployments ${scope.join(', ') || '(none)'}; use an unscoped key to ${action}.`);
  }
}
