import { Type, type Static } from 'typebox';
import { Id, PageQuery } from '../../shared/schemas.js';

/** The literal a read returns for a secret-looking name, and which a write refuses as a value. */
export const MASK = '[ENCRYPTED]';

export const NAME_MAX = 255;
/** Characters (code points) of one value. */
export const VALUE_MAX = 32_768;
export const ITEMS_MAX = 1_000;
/** The PUT body as a whole (bytes). */
export const BODY_MAX = 4 * 1024 * 1024;

export const EnvVariableItemSchema = Type.Object(
  {
    name: Type.String(),
    value: Type.String({ description: `The value, or \`${MASK}\` when the name contains PASS, SECRET, TOKEN, KEY or CREDENTIAL (any case).` }),
  },
  { $id: 'EnvVariableItem' },
);
export type EnvVariableItem = Static<typeof EnvVariableItemSchema>;

export const EnvVariablesListResponseSchema = Type.Object(
  {
    items: Type.Array(Type.Ref('EnvVariableItem')),
    data: Type.Array(Type.Ref('EnvVariableItem'), { deprecated: true, description: 'Deprecated: the same array as `items`.' }),
    pageInfo: Type.Ref('PageInfo'),
  },
  {
    $id: 'EnvVariablesListResponse',
    description: 'A page of the deployment’s environment variables in name order (byte order), secret-looking values masked.',
  },
);
export type EnvVariablesListResponse = Static<typeof EnvVariablesListResponseSchema>;

export const EnvVariableDeletedSchema = Type.Object({ success: Type.Boolean() }, { $id: 'EnvVariableDeleted' });

export const SetEnvVariablesBody = Type.Object(
  {
    env_variables: Type.Array(
      Type.Object(
        {
          name: Type.String({
            minLength: 1,
            maxLength: NAME_MAX,
            description: 'A new name must match ^[A-Za-z_][A-Za-z0-9_]*$; a name the deployment already has may be sent as it is.',
          }),
          value: Type.String({ maxLength: VALUE_MAX, description: `At most ${VALUE_MAX} characters; never \`${MASK}\`.` }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: ITEMS_MAX, description: 'The variables to create or overwrite, each name once; variables not listed keep their values.' },
    ),
  },
  { additionalProperties: false },
);
export type SetEnvVariablesInput = Static<typeof SetEnvVariablesBody>;

export const EnvVarsQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
export const EnvVarParams = Type.Object({ deploymentId: Id, name: Type.String({ minLength: 1, maxLength: NAME_MAX }) });

export const envVarSchemas = [EnvVariableItemSchema, EnvVariablesListResponseSchema, EnvVariableDeletedSchema];
