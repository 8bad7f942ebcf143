import { Type, type Static } from 'typebox';
import { Id, Nullable } from '../../shared/schemas.js';

/** A provider's address and model are short; a key is long but bounded (hosted keys are under 200 characters). */
const URL_MAX = 2_048;
const MODEL_MAX = 200;
const KEY_MAX = 4_096;
/** The bounds of the limits an admin may set. */
export const LIMIT_BOUNDS = {
  maxTokensPerAnswer: { minimum: 16, maximum: 1_000_000 },
  maxToolCallsPerAnswer: { minimum: 0, maximum: 100 },
  // The column is a 32-bit integer on PostgreSQL; two billion tokens a month is past any budget.
  tokensPerUserPerMonth: { minimum: 1, maximum: 2_000_000_000 },
} as const;

const ProviderSchema = Type.Object(
  {
    baseUrl: Type.String({ description: 'The provider’s API root (`https://api.openai.com/v1`); chat completions are under it.' }),
    model: Type.String({ description: 'The model asked for.' }),
    apiKeySet: Type.Boolean({ description: 'Whether a key is stored (it is never answered).' }),
    source: Type.Union([Type.Literal('account'), Type.Literal('server')], {
      description: '`account`: the account’s own provider; `server`: the operator’s default (AI_PROVIDER_URL).',
    }),
  },
  { $id: 'AiProvider' },
);

const LimitsSchema = Type.Object(
  {
    maxTokensPerAnswer: Type.Integer({ ...LIMIT_BOUNDS.maxTokensPerAnswer, description: 'The most tokens one answer may write (default 1024).' }),
    maxToolCallsPerAnswer: Type.Integer({ ...LIMIT_BOUNDS.maxToolCallsPerAnswer, description: 'The most tool calls one answer may make (default 8).' }),
    tokensPerUserPerMonth: Nullable(
      Type.Integer({
        ...LIMIT_BOUNDS.tokensPerUserPerMonth,
        description: 'The most tokens (prompt and completion) one user or embed user may spend in a calendar month (UTC); null: no budget (default).',
      }),
    ),
  },
  { $id: 'AiLimits' },
);

export const AiSettingsSchema = Type.Object(
  {
    enabled: Type.Boolean({
      description:
        'Whether AI features are on for the account (default false); an embed session’s `allowAi` inherits it when neither the session nor the embed settings say.',
    }),
    provider: Type.Union([Type.Ref('AiProvider'), Type.Null()], {
      description: 'The provider AI features call: the account’s own, else the server’s default; null: none configured.',
    }),
    limits: Type.Ref('AiLimits'),
  },
  { $id: 'AiSettings' },
);
export type AiSettings = { enabled: boolean; provider: AiProviderView | null; limits: AiLimits };
export type AiProviderView = Static<typeof ProviderSchema>;
export type AiLimits = Static<typeof LimitsSchema>;

/** A merge: the keys sent replace their values; `provider: null` drops the account's own provider (the server's is used). */
export const AiSettingsInput = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    provider: Type.Optional(
      Type.Union([
        Type.Object(
          {
            baseUrl: Type.String({ minLength: 1, maxLength: URL_MAX, description: 'An http(s) API root, without credentials, query or fragment.' }),
            model: Type.String({ minLength: 1, maxLength: MODEL_MAX }),
            apiKey: Type.Optional(
              Type.Union([Type.String({ minLength: 1, maxLength: KEY_MAX }), Type.Null()], {
                description: 'Sent as `Authorization: Bearer …`; omitted: the stored key is kept; null: none (a local server that asks for none).',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ]),
    ),
    limits: Type.Optional(
      Type.Object(
        {
          maxTokensPerAnswer: Type.Optional(Type.Integer(LIMIT_BOUNDS.maxTokensPerAnswer)),
          maxToolCallsPerAnswer: Type.Optional(Type.Integer(LIMIT_BOUNDS.maxToolCallsPerAnswer)),
          tokensPerUserPerMonth: Type.Optional(Nullable(Type.Integer(LIMIT_BOUNDS.tokensPerUserPerMonth))),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type AiSettingsInput = Static<typeof AiSettingsInput>;

export const AiUsageQuery = Type.Object(
  {
    month: Type.Optional(Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$', description: 'A calendar month, `YYYY-MM` (UTC); default: the current one.' })),
  },
  { additionalProperties: false },
);

const UsageRowSchema = Type.Object(
  {
    userId: Nullable(Id),
    embedUserId: Nullable(Id),
    promptTokens: Type.Integer({ minimum: 0 }),
    completionTokens: Type.Integer({ minimum: 0 }),
    answers: Type.Integer({ minimum: 0 }),
  },
  { $id: 'AiUsageRow', description: 'One user’s (or embed user’s: `embedUserId`) spending in the month.' },
);

export const AiUsageSchema = Type.Object(
  {
    month: Type.String({ description: '`YYYY-MM`.' }),
    limit: Nullable(Type.Integer({ description: 'The monthly budget per user then in force (`tokensPerUserPerMonth`); null: none.' })),
    items: Type.Array(Type.Ref('AiUsageRow'), { description: 'Every user and embed user who spent tokens that month, most tokens first.' }),
  },
  { $id: 'AiUsage' },
);
export type AiUsage = Static<typeof AiUsageSchema>;

export const aiSettingsSchemas = [ProviderSchema, LimitsSchema, AiSettingsSchema, UsageRowSchema, AiUsageSchema];
