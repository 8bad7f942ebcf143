import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { OAuthService } from './oauth.service.js';
import { ApproveDeviceBody } from './oauth.schemas.js';

/** Extension routes of the authorization server that take a credential (README, OAuth). */
export function oauthRoutes(service: OAuthService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/oauth/device-approvals',
      {
        schema: {
          operationId: 'approveDeviceSignIn',
          tags: ['OAuth'],
          summary: 'Approve a device sign-in by its user code (extension; admin only)',
          description:
            'For tenants without an identity provider: the device that showed `userCode` receives tokens acting as `userId` (default: the caller) within the deployments it asked for.',
          body: ApproveDeviceBody,
          response: { 200: Type.Ref('DeviceApproval') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'USER_NOT_FOUND', 'DEVICE_CODE_NOT_FOUND'],
        },
      },
      async (request) => service.approveDevice(request.caller, request.body),
    );
  };
}
