import { Type, type Static } from 'typebox';
import { OPERATORS as FILTER_OPERATORS } from '../../semantic-layer/query/query.js';

/**
 * The dashboard controls a render applies (reference 6.0): filters, time grains and member
 * switchers, as notifications and dashboard exports send them.
 */

const MEMBER = '.+\\..+';
const nullable = <T extends Parameters<typeof Type.Optional>[0]>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

export const DashboardFilterInput = Type.Object(
  {
    member: Type.String({ pattern: MEMBER, maxLength: 255, description: 'A dimension path such as `orders.status`.' }),
    operator: nullable(Type.Enum([...FILTER_OPERATORS])),
    value: Type.Optional(
      Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.Unknown(), { maxItems: 1000 }), Type.Null()], {
        description: 'Left out for the `is_*` operators; `[start, end]` for `between`.',
      }),
    ),
    caseSensitive: Type.Optional(Type.Unknown()),
    startInclusive: Type.Optional(Type.Unknown()),
    endInclusive: Type.Optional(Type.Unknown()),
  },
  { $id: 'DashboardFilterInput', additionalProperties: false },
);
export type DashboardFilterInput = Static<typeof DashboardFilterInput>;

export const DashboardTimeGrainInput = Type.Object(
  {
    member: Type.String({ pattern: MEMBER, maxLength: 255 }),
    grain: Type.String({ minLength: 1, maxLength: 32, description: 'For example `day`, `week`, `month`.' }),
  },
  { $id: 'DashboardTimeGrainInput', additionalProperties: false },
);
export type DashboardTimeGrainInput = Static<typeof DashboardTimeGrainInput>;

export const DashboardMemberSwitcherInput = Type.Object(
  {
    member: Type.String({ pattern: MEMBER, maxLength: 255, description: 'The member the switcher control replaces.' }),
    selected: Type.String({ minLength: 1, maxLength: 255, description: 'The member shown instead, without the view prefix.' }),
  },
  { $id: 'DashboardMemberSwitcherInput', additionalProperties: false },
);
export type DashboardMemberSwitcherInput = Static<typeof DashboardMemberSwitcherInput>;

export const dashboardControlSchemas = [DashboardFilterInput, DashboardTimeGrainInput, DashboardMemberSwitcherInput];
