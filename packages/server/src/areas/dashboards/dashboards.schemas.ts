import { Type, type Static } from 'typebox';
import { Id, Nullable, PageQuery, ref } from '../../shared/schemas.js';
import { DashboardConfig, DashboardConfigDraft, DashboardConfigDraftInput } from '../workspace/index.js';
import { WorkbookParams } from '../../shared/schemas.js';

export { WorkbookParams };

/** Public ids are 22 characters of base64url (128 random bits); the bound keeps bad paths short. */
export const PublicIdParams = Type.Object({ publicId: Type.String({ minLength: 1, maxLength: 64 }) });

export const SaveDraftBody = Type.Object(
  {
    dashboardDraft: {
      ...Nullable(ref(DashboardConfigDraftInput)),
      description:
        'The draft; null clears it. Widgets without an `id` get one from the server; `FIELD` widgets are accepted; a legacy `TABS_CONTAINER` is stored as a `CONTAINER` with `config.layout` `tabs`.',
    },
  },
  { additionalProperties: false },
);
export type SaveDraftInput = Static<typeof SaveDraftBody>;

export const DashboardDraftResponse = Type.Object(
  {
    dashboardDraft: Nullable(ref(DashboardConfigDraft)),
    dashboardPublished: Nullable(ref(DashboardConfig)),
  },
  { $id: 'DashboardDraftResponse' },
);

export const PublishBody = Type.Object(
  {
    workbookId: Type.Optional({ ...Id, description: 'The workbook of the path, which the reference also sends here; another id is a 400.' }),
    dashboardId: Type.Optional({ ...Nullable(Id), description: 'The workbook’s dashboard, when the client knows it; another id is a 400.' }),
    title: Type.Optional({ ...Nullable(Type.String({ maxLength: 255 })), description: 'Title of the version; absent or null takes the config’s `title`.' }),
    description: Type.Optional({
      ...Nullable(Type.String({ maxLength: 10_000 })),
      description: 'Description of the version; absent or null takes the config’s `description`.',
    }),
    allowEmbed: Type.Optional({
      ...Nullable(Type.Boolean()),
      description:
        'Sets the dashboard’s signed-embedding switch (it belongs to the dashboard, not the version); absent or null keeps it (off on a first publication).',
    }),
    config: Type.Optional({
      ...Nullable(ref(DashboardConfigDraftInput)),
      description:
        'What to publish; absent or null publishes the saved draft. Every widget needs an `id` (at most 128 characters, unique); a `FIELD` widget is refused.',
    }),
  },
  { additionalProperties: false },
);
export type PublishInput = Static<typeof PublishBody>;

export const VersionsQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
export type VersionsInput = Static<typeof VersionsQuery>;

export const AiWidgetThreadBody = Type.Object(
  {
    widgetId: Type.String({ minLength: 1, maxLength: 128, description: 'An AI widget of the published version.' }),
    threadId: Type.String({ minLength: 1, maxLength: 128, description: 'The chat thread that answers it.' }),
    checksum: Type.Optional(Nullable(Type.String({ maxLength: 256, description: 'Of what the thread answered, so a reload can tell it is current.' }))),
  },
  { additionalProperties: false },
);
export type AiWidgetThreadInput = Static<typeof AiWidgetThreadBody>;

export const AllowEmbedBody = Type.Object({ allowEmbed: Type.Boolean() }, { additionalProperties: false });

export const AllowEmbedResponse = Type.Object({ publicId: Type.String(), allowEmbed: Type.Boolean() }, { $id: 'DashboardAllowEmbed' });

export const DashboardPage = Type.Object({ items: Type.Array(Type.Ref('Dashboard')), pageInfo: Type.Ref('PageInfo') }, { $id: 'DashboardPage' });

export const dashboardSchemas = [DashboardDraftResponse, AllowEmbedResponse, DashboardPage];
