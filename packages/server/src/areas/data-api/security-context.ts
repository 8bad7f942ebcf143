import type { SecurityContext } from '../../semantic-layer/query/access.js';

/** What the model's access policies see of a user of the account; built with every other caller's context in embed-tenants/security-context.ts. */
export { userSecurityContext as securityContextOf } from '../embed-tenants/index.js';

/** The caller's context as the pod's header carries it. */
export const encodeSecurity = (security: SecurityContext) => Buffer.from(JSON.stringify(security), 'utf8').toString('base64url');
