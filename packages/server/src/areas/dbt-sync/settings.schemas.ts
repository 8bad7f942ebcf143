import { Type, type Static } from 'typebox';
import { Nullable, Timestamp } from '../../shared/schemas.js';

const Entry = Type.String({ minLength: 1, maxLength: 1024 });
const Entries = (what: string) => Type.Array(Entry, { maxItems: 200, description: what });

export const DbtSyncSelectorSchema = Type.Object(
  {
    paths: Entries('Folders or files of the project (`models/marts`, `models/marts/orders.sql`).'),
    tags: Entries('dbt tags.'),
    names: Entries('Model names.'),
  },
  {
    $id: 'DbtSyncSelector',
    description: 'A model is synced when it matches any entry; every list empty: all enabled models. A selector that matches nothing fails the run.',
  },
);
export type DbtSyncSelector = Static<typeof DbtSyncSelectorSchema>;

const RepositoryView = Type.Object(
  {
    type: Type.Enum(['deployment', 'url'], { description: '`deployment`: the deployment’s own repository. `url`: another one, read over HTTPS.' }),
    url: Type.Optional(Type.String({ description: 'For `url`: the repository’s https URL.' })),
    hasToken: Type.Optional(Type.Boolean({ description: 'For `url`: whether an access token is saved (it is never answered).' })),
  },
  { additionalProperties: false, description: 'Where the transformation project lives.' },
);

const RepositoryInput = Type.Object(
  {
    type: Type.Enum(['deployment', 'url']),
    url: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, description: 'Required for `url`: an https URL without user, password, query or fragment.' }),
    ),
    token: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 4096,
          description:
            'For `url`: an access token that may read the repository, stored encrypted and never answered. Left out: the saved one is kept while the URL’s origin stays the same; null: none.',
        }),
      ),
    ),
  },
  { additionalProperties: false },
);

export const DbtSyncSettingsSchema = Type.Object(
  {
    deploymentId: Type.Integer(),
    repository: RepositoryView,
    ref: Nullable(Type.String({ description: 'The branch or tag a `git` sync reads; null: a branch named as the deployment’s deploy branch.' })),
    manifestPath: Type.String({ description: 'Where the compiled manifest is committed, from the repository root.' }),
    outputPath: Type.String({ description: 'The folder the generated cubes are written to, from the deployment’s project root.' }),
    selector: Type.Ref('DbtSyncSelector'),
    updatedAt: Nullable(Timestamp),
  },
  { $id: 'DbtSyncSettings' },
);
export type DbtSyncSettings = Omit<Static<typeof DbtSyncSettingsSchema>, 'selector'> & { selector: DbtSyncSelector };

export const PutDbtSyncSettingsBody = Type.Object(
  {
    repository: Type.Optional(RepositoryInput),
    ref: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
    manifestPath: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    outputPath: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    selector: Type.Optional(
      Type.Object({ paths: Type.Optional(Entries('')), tags: Type.Optional(Entries('')), names: Type.Optional(Entries('')) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);
export type PutDbtSyncSettingsInput = Static<typeof PutDbtSyncSettingsBody>;

export const dbtSyncSettingsSchemas = [DbtSyncSelectorSchema, DbtSyncSettingsSchema];
