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
  { $id: 'DbtSyncSelector', description: 'A model is synced when it matches any entry; every list empty: all enabled models. A selector that matches nothing fails the run.' },
);
export type DbtSyncSelector = Static<typeof DbtSyncSelectorSchema>;

const Repository = Type.Object(
  { type: Type.Enum(['deployment'], { description: '`deployment`: the deployment’s own repository (the only kind so far).' }) },
  { additionalProperties: false, description: 'Where the transformation project lives.' },
);

export const DbtSyncSettingsSchema = Type.Object(
  {
    deploymentId: Type.Integer(),
    repository: Repository,
    ref: Nullable(Type.String({ description: 'The branch or tag a `git` sync reads; null: the deployment’s deploy branch.' })),
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
    repository: Type.Optional(Repository),
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
