import { Type, type Static } from 'typebox';
import { DeploymentParams, Id, Nullable, ref, WorkbookParams } from '../../shared/schemas.js';
import { DashboardConfigInput } from '../workspace/index.js';
import { ItemName } from '../workspace/index.js';

/**
 * A workbook's slug: its stable, human-readable key within a deployment, for scripts that upsert.
 * 1 to 100 characters of lowercase letters, digits and hyphens, starting with a letter or digit
 * (100 is also the longest path parameter the router accepts).
 */
export const SLUG_PATTERN = '^[a-z0-9][a-z0-9-]{0,99}$';
export const SLUG_MAX_LENGTH = 100;
export const Slug = Type.String({
  pattern: SLUG_PATTERN,
  description: 'Unique per deployment: 1 to 100 characters of lowercase letters, digits and hyphens, starting with a letter or digit.',
});

export { WorkbookParams };
export const WorkbookSlugParams = Type.Object({ ...DeploymentParams.properties, slug: Slug });

const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const UpsertWorkbookBody = Type.Object(
  {
    name: ItemName,
    folderId: Type.Optional({
      ...Nullable(Id),
      description:
        'Containing folder; null for the workspace root. On create, absent means the root. On update, absent keeps the folder, and a different value moves the workbook with the single move’s checks and errors.',
    }),
    meta: Type.Optional({ ...JsonObject, description: 'Free-form object. On update, absent keeps the stored value.' }),
    calculatedFields: Type.Optional({ ...JsonObject, description: 'Free-form object. On update, absent keeps the stored value.' }),
    dashboardDraft: Type.Optional({
      ...Nullable(ref(DashboardConfigInput)),
      description: 'The draft dashboard; null clears it. A legacy `TABS_CONTAINER` widget is stored as a `CONTAINER` with `config.layout` `tabs`.',
    }),
  },
  {
    additionalProperties: false,
    description: 'Creates the workbook with this slug, or updates it. Fields left out keep their stored values on update and take their defaults on create.',
  },
);
export type UpsertWorkbookInput = Static<typeof UpsertWorkbookBody>;

export const DuplicateWorkbookBody = Type.Object(
  {
    shared: Type.Optional({
      ...Nullable(Type.Boolean()),
      description:
        'Reference 8.G.1: `true` clones from the shared workspace, which only a creator-mode embed session may (403 for any other caller): the copy is built from the published dashboard’s report snapshots (400 when there is none) and lands at the root.',
    }),
    folderId: Type.Optional({
      ...Nullable(Id),
      description:
        'Where the copy goes (needs EDIT there); null for the workspace root. Absent: beside the source when the caller has EDIT on its folder, otherwise the root.',
    }),
    name: Type.Optional({ ...ItemName, description: 'Name of the copy; absent gives "Copy of <source name>".' }),
  },
  { additionalProperties: false },
);
export type DuplicateWorkbookInput = Static<typeof DuplicateWorkbookBody>;
