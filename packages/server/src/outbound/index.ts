/**
 * The outbound service: every HTTP call the server makes to others goes through one `Outbound`,
 * with timeouts, retries of idempotent calls, a guard against private addresses (checked on the
 * address actually connected to) and logs that show no query string, header or body.
 *
 * @example
 *   const outbound = new Outbound({ allowPrivate: config.outbound.allowPrivate });
 *   const res = await outbound.request('https://idp.example.com/token', { method: 'POST', body, headers });
 */
export {
  Outbound,
  OutboundError,
  describeUrl,
  type OutboundFailure,
  type OutboundLog,
  type OutboundOptions,
  type OutboundRequest,
  type OutboundResponse,
} from './outbound.js';
export { AllowList, isPrivateAddress } from './address-guard.js';
