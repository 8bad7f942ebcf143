import { Type, type Static } from 'typebox';
import { Id, Nullable } from '../../shared/schemas.js';

export const ApproveDeviceBody = Type.Object(
  {
    userCode: Type.String({ minLength: 1, maxLength: 64, description: 'The code the device shows (any case; dashes and spaces are ignored).' }),
    userId: Type.Optional(Id),
  },
  { additionalProperties: false },
);
export type ApproveDeviceInput = Static<typeof ApproveDeviceBody>;

export const DeviceApprovalSchema = Type.Object(
  {
    userId: Id,
    clientId: Type.String(),
    deploymentIds: Nullable(Type.Array(Id, { description: 'Deployments the tokens may target; null for every deployment.' })),
  },
  { $id: 'DeviceApproval' },
);
export type DeviceApproval = Static<typeof DeviceApprovalSchema>;

export const oauthSchemas = [DeviceApprovalSchema];
