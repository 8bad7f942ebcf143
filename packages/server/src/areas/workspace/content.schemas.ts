import { Type, type Static, type TSchema } from 'typebox';
import { Id, Nullable, ref } from '../../shared/schemas.js';

/**
 * Workspace content: dashboard configs, published dashboards and report snapshots, typed as the
 * spec types them (spec: Resources and their fields, DashboardConfig to ReportSnapshot).
 *
 * additionalProperties, decided per schema:
 * - Dashboard configs and everything inside them (app source, manifest, layout, widgets, positions,
 *   breakpoint maps) and the report settings (preferences, column formats, period comparisons,
 *   fill-missing-rows) are documents a client authors and reads back. A client one release ahead
 *   that sends a field this server does not know yet expects it to be kept: rejecting it (400)
 *   would break newer clients against an older server, and dropping it silently would lose their
 *   data on the next save. So these schemas say `additionalProperties: true` explicitly: unknown
 *   fields pass validation (declared fields are still checked), are stored as sent, and are
 *   serialized back (the response serializer only emits undeclared fields when this is explicit).
 * - Dashboard and ReportSnapshot are records the server builds from its own columns, never request
 *   bodies. They leave the keyword unset, like the other response schemas: JSON Schema keeps them
 *   open, so a client validating responses accepts fields added in a later release, and the
 *   serializer emits only the declared fields, so stray keys in old stored JSON never leak out.
 * - Free-form objects (`settings`, `theme`, widget `config` (whose `chart` settings are checked) and `style`, snapshot `meta`) are maps
 *   of anything by definition.
 *
 * Schemas with an `$id` become OpenAPI components and refer to each other by `$id`; `contentSchemas`
 * lists them for registration.
 */

/** Client-authored content: unknown fields are accepted and kept (see above). */
const open = { additionalProperties: true } as const;

const FreeForm = Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form object.' });
const StringMap = Type.Record(Type.String(), Type.String());
const optionalNullable = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));

/** An object with the optional keys `lg`, `md`, `sm`, `xs`, `xxs`, each `value` or null. */
const byBreakpoint = <T extends TSchema>(value: T, description: string) =>
  Type.Object(
    {
      lg: optionalNullable(value),
      md: optionalNullable(value),
      sm: optionalNullable(value),
      xs: optionalNullable(value),
      xxs: optionalNullable(value),
    },
    { ...open, description },
  );

// ---------------------------------------------------------------------------------------------
// DashboardWidget
// ---------------------------------------------------------------------------------------------

export const DashboardWidgetPosition = Type.Object(
  { x: Type.Integer(), y: Type.Integer(), w: Type.Integer(), h: Type.Integer() },
  { ...open, $id: 'DashboardWidgetPosition', description: 'Grid position and size of a widget.' },
);
export type DashboardWidgetPosition = Static<typeof DashboardWidgetPosition>;

const ADVERTISED_WIDGET_TYPES = ['CHART', 'TEXT', 'FILTER', 'AI', 'TIME_GRAIN', 'PARENT', 'SPACER', 'DIVIDER', 'CONTAINER'] as const;

/** Widget types the API advertises and returns. */
export const DashboardWidgetType = Type.Enum([...ADVERTISED_WIDGET_TYPES], {
  description: 'A tabbed container is a `CONTAINER` whose `config.layout` is `tabs`.',
});
export type DashboardWidgetType = Static<typeof DashboardWidgetType>;

/** Widget types accepted from clients: the advertised ones plus the legacy `TABS_CONTAINER` (spec: Versioning, 0.4.0). */
export const DashboardWidgetInputType = Type.Enum([...ADVERTISED_WIDGET_TYPES, 'TABS_CONTAINER'], {
  description:
    'A tabbed container is a `CONTAINER` whose `config.layout` is `tabs`. ' +
    '`TABS_CONTAINER` is deprecated: it is still accepted and stored as that `CONTAINER`.',
});
export type DashboardWidgetInputType = Static<typeof DashboardWidgetInputType>;

/**
 * How a widget's chart is drawn where its report's spec does not say (docs/api/dashboards.md).
 * `missingValues`: a period of a time series with no rows is a gap in the line (`gap`, the
 * default) or drawn as zero (`zero`).
 */
export const DashboardWidgetChartSettings = Type.Object(
  {
    missingValues: optionalNullable(
      Type.Enum(['gap', 'zero'], {
        description:
          'Extension: how a period of a time series with no rows is drawn: `gap` (default), a break in the line; `zero`, a value of 0. Periods are filled at the query’s time grain over the rows’ range (or the query’s date range when it names two dates).',
      }),
    ),
  },
  { ...open, $id: 'DashboardWidgetChartSettings', description: 'Extension: how the widget’s chart is drawn.' },
);
export type DashboardWidgetChartSettings = Static<typeof DashboardWidgetChartSettings>;

/** A widget's `config`: free-form, with the chart settings checked where they are given. */
const WidgetConfig = Type.Object(
  { chart: optionalNullable(ref(DashboardWidgetChartSettings)) },
  { ...open, description: 'Free-form object. `chart` (extension), when given, is checked as DashboardWidgetChartSettings.' },
);

const widgetProperties = <T extends TSchema>(type: T) => ({
  id: Type.String(),
  type,
  position: ref(DashboardWidgetPosition),
  config: optionalNullable(WidgetConfig),
  style: optionalNullable(FreeForm),
  responsiveLayouts: optionalNullable(byBreakpoint(ref(DashboardWidgetPosition), 'Position per breakpoint.')),
});

export const DashboardWidget = Type.Object(widgetProperties(DashboardWidgetType), { ...open, $id: 'DashboardWidget' });
export type DashboardWidget = Static<typeof DashboardWidget>;

export const DashboardWidgetInput = Type.Object(widgetProperties(DashboardWidgetInputType), {
  ...open,
  $id: 'DashboardWidgetInput',
  description: 'A dashboard widget as clients send it: `TABS_CONTAINER` is still accepted (deprecated) and converted.',
});
export type DashboardWidgetInput = Static<typeof DashboardWidgetInput>;

// ---------------------------------------------------------------------------------------------
// DashboardLayout, DashboardAppSource, DashboardConfig
// ---------------------------------------------------------------------------------------------

export const DashboardLayout = Type.Object(
  {
    breakpoints: optionalNullable(byBreakpoint(Type.Integer(), 'Minimum width per breakpoint.')),
    cols: optionalNullable(byBreakpoint(Type.Integer(), 'Column count per breakpoint.')),
    containerPadding: optionalNullable(Type.Array(Type.Integer())),
    margin: optionalNullable(Type.Array(Type.Integer())),
    rowHeight: optionalNullable(Type.Integer()),
  },
  { ...open, $id: 'DashboardLayout' },
);
export type DashboardLayout = Static<typeof DashboardLayout>;

export const DashboardAppManifest = Type.Object(
  {
    dependencies: optionalNullable(StringMap),
    version: optionalNullable(Type.Integer()),
  },
  { ...open, $id: 'DashboardAppManifest' },
);
export type DashboardAppManifest = Static<typeof DashboardAppManifest>;

export const DashboardAppSource = Type.Object(
  {
    entry: optionalNullable(Type.String({ maxLength: 255 })),
    files: optionalNullable(StringMap),
    html: optionalNullable(Type.String()),
    manifest: optionalNullable(ref(DashboardAppManifest)),
  },
  { ...open, $id: 'DashboardAppSource' },
);
export type DashboardAppSource = Static<typeof DashboardAppSource>;

const configProperties = <T extends TSchema>(widget: T) => ({
  title: optionalNullable(Type.String()),
  description: optionalNullable(Type.String()),
  kind: optionalNullable(Type.Enum(['CLASSIC', 'APP'])),
  app: optionalNullable(ref(DashboardAppSource)),
  layout: optionalNullable(ref(DashboardLayout)),
  settings: optionalNullable(FreeForm),
  theme: optionalNullable(FreeForm),
  widgets: optionalNullable(Type.Array(widget)),
});

export const DashboardConfig = Type.Object(configProperties(ref(DashboardWidget)), { ...open, $id: 'DashboardConfig' });
export type DashboardConfig = Static<typeof DashboardConfig>;

export const DashboardConfigInput = Type.Object(configProperties(ref(DashboardWidgetInput)), {
  ...open,
  $id: 'DashboardConfigInput',
  description: 'A dashboard config as clients send it; stored and returned as a DashboardConfig.',
});
export type DashboardConfigInput = Static<typeof DashboardConfigInput>;

// ---------------------------------------------------------------------------------------------
// Drafts (reference 8.G.3): `FIELD` widgets, and widgets without ids on the way in
// ---------------------------------------------------------------------------------------------

/** Longest widget id (reference 8.G.2). */
export const WIDGET_ID_MAX_LENGTH = 128;

/**
 * Widget types a draft may hold: the advertised ones plus `FIELD`, a widget being set up that
 * cannot be published yet (a publish naming it is refused).
 */
export const DashboardDraftWidgetType = Type.Enum([...ADVERTISED_WIDGET_TYPES, 'FIELD'], {
  description: 'The dashboard widget types plus `FIELD`, which a draft may hold and a publication may not.',
});

/** A widget of a saved draft: its id is always there (the server assigned any that was missing). */
export const DashboardDraftWidget = Type.Object(widgetProperties(DashboardDraftWidgetType), { ...open, $id: 'DashboardDraftWidget' });
export type DashboardDraftWidget = Static<typeof DashboardDraftWidget>;

/** A saved draft: a DashboardConfig whose widgets may also be `FIELD`. */
export const DashboardConfigDraft = Type.Object(configProperties(ref(DashboardDraftWidget)), {
  ...open,
  $id: 'DashboardConfigDraft',
  description: 'A dashboard draft: a DashboardConfig whose widgets may also be of type `FIELD`.',
});
export type DashboardConfigDraft = Static<typeof DashboardConfigDraft>;

/** A widget as a draft or a publish sends it: the id may be left out, `FIELD` and `TABS_CONTAINER` are accepted. */
export const DashboardDraftWidgetInput = Type.Object(
  {
    ...widgetProperties(Type.Enum([...ADVERTISED_WIDGET_TYPES, 'FIELD', 'TABS_CONTAINER'])),
    id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: WIDGET_ID_MAX_LENGTH,
        description: 'At most 128 characters. Left out in a draft, the server assigns one; a publish needs it.',
      }),
    ),
  },
  {
    ...open,
    $id: 'DashboardDraftWidgetInput',
    description: 'A widget as clients send it in a draft or a publish: `FIELD` is accepted (a publish refuses it), `TABS_CONTAINER` is converted.',
  },
);
export type DashboardDraftWidgetInput = Static<typeof DashboardDraftWidgetInput>;

export const DashboardConfigDraftInput = Type.Object(configProperties(ref(DashboardDraftWidgetInput)), {
  ...open,
  $id: 'DashboardConfigDraftInput',
  description: 'A dashboard config as a draft save or a publish sends it.',
});
export type DashboardConfigDraftInput = Static<typeof DashboardConfigDraftInput>;

// ---------------------------------------------------------------------------------------------
// ReportSnapshot
// ---------------------------------------------------------------------------------------------

export const ReportKind = Type.Enum(['vega', 'table', 'kpi', 'html', 'map', 'sankey'], {
  $id: 'ReportKind',
  description: '`sankey` since 0.5.0.',
});
export type ReportKind = Static<typeof ReportKind>;

export const PeriodComparison = Type.Object(
  {
    measure: Type.String(),
    timeDimension: Type.String(),
    offset: Type.Object({ amount: Type.Integer(), unit: Type.String() }, open),
    outputs: optionalNullable(Type.Array(Type.String())),
  },
  { ...open, $id: 'PeriodComparison' },
);
export type PeriodComparison = Static<typeof PeriodComparison>;

export const ColumnFormat = Type.Object(
  {
    type: Type.Enum(['currency', 'percent', 'number']),
    decimalPlaces: optionalNullable(Type.Integer()),
  },
  { ...open, $id: 'ColumnFormat' },
);
export type ColumnFormat = Static<typeof ColumnFormat>;

export const ReportPreferences = Type.Object(
  { columnFormats: Type.Optional(Type.Record(Type.String(), ref(ColumnFormat), { description: 'Format per column name.' })) },
  { ...open, $id: 'ReportPreferences' },
);
export type ReportPreferences = Static<typeof ReportPreferences>;

export const FillMissingRows = Type.Object(
  {
    member: Type.String(),
    excludedDimensions: optionalNullable(Type.Array(Type.String())),
  },
  { ...open, $id: 'FillMissingRows' },
);
export type FillMissingRows = Static<typeof FillMissingRows>;

export const ReportSnapshot = Type.Object(
  {
    id: Id,
    reportId: Id,
    versionNumber: Type.Integer(),
    name: optionalNullable(Type.String()),
    title: optionalNullable(Type.String()),
    description: optionalNullable(Type.String()),
    pythonCode: optionalNullable(Type.String()),
    sqlQuery: optionalNullable(Type.String()),
    kind: optionalNullable(ref(ReportKind)),
    meta: optionalNullable(FreeForm),
    spec: Type.Optional(Type.Union([Type.String(), FreeForm, Type.Null()])),
    isSourceReport: optionalNullable(Type.Boolean()),
    fillMissingRows: optionalNullable(ref(FillMissingRows)),
    periodComparisons: optionalNullable(Type.Array(ref(PeriodComparison))),
    preferences: optionalNullable(ref(ReportPreferences)),
  },
  { $id: 'ReportSnapshot' },
);
export type ReportSnapshot = Static<typeof ReportSnapshot>;

// ---------------------------------------------------------------------------------------------
// Dashboard
// ---------------------------------------------------------------------------------------------

export const DashboardStatus = Type.Enum(['draft', 'published', 'archived']);
export type DashboardStatus = Static<typeof DashboardStatus>;

export const Dashboard = Type.Object(
  {
    id: Id,
    publicId: Type.String(),
    deploymentId: Id,
    workbookId: Id,
    status: DashboardStatus,
    allowEmbed: Type.Boolean(),
    config: ref(DashboardConfig),
    versionNumber: Type.Integer(),
    versionId: Id,
    reportSnapshots: Type.Array(ref(ReportSnapshot)),
    createdBy: optionalNullable(Id),
    description: optionalNullable(Type.String()),
    title: optionalNullable(Type.String()),
    fromSharedWorkspace: optionalNullable(Type.Boolean()),
    restrictDataDownload: optionalNullable(Type.Boolean()),
    useBoardDashboards: optionalNullable(Type.Boolean()),
    aiWidgetThreads: Type.Optional(
      Nullable(
        Type.Record(Type.String(), Type.Object({ threadId: Type.String(), checksum: Nullable(Type.String()) }), {
          description:
            'Extension: the chat thread stored for each AI widget of the published version, by widget id (reference 8.G.4), with the checksum of what it answered; never the answer, which a reload regenerates. Null or absent: none.',
        }),
      ),
    ),
  },
  { $id: 'Dashboard' },
);
export type Dashboard = Static<typeof Dashboard>;

/** Schemas other schemas refer to by `$id`; registered once by the app. */
export const contentSchemas = [
  DashboardWidgetPosition,
  DashboardWidgetChartSettings,
  DashboardWidget,
  DashboardWidgetInput,
  DashboardLayout,
  DashboardAppManifest,
  DashboardAppSource,
  DashboardConfig,
  DashboardConfigInput,
  DashboardDraftWidget,
  DashboardConfigDraft,
  DashboardDraftWidgetInput,
  DashboardConfigDraftInput,
  ReportKind,
  PeriodComparison,
  ColumnFormat,
  ReportPreferences,
  FillMissingRows,
  ReportSnapshot,
  Dashboard,
];

// ---------------------------------------------------------------------------------------------
// TABS_CONTAINER conversion (spec: DashboardWidget; Versioning, 0.4.0)
// ---------------------------------------------------------------------------------------------

type JsonObject = Record<string, unknown>;
const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A legacy `TABS_CONTAINER` widget as the `CONTAINER` it stands for: `config.layout` becomes `tabs`
 * (overriding any other layout) and the other config keys stay. Anything else comes back as given,
 * including a `TABS_CONTAINER` whose config is neither an object nor null, which validation rejects.
 */
function convertWidget(widget: unknown): unknown {
  if (!isObject(widget) || widget.type !== 'TABS_CONTAINER') return widget;
  const config = widget.config;
  if (config !== null && config !== undefined && !isObject(config)) return widget;
  return { ...widget, type: 'CONTAINER', config: { ...config, layout: 'tabs' } };
}

/**
 * Converts every top-level widget of type `TABS_CONTAINER` into a `CONTAINER` with
 * `config.layout: 'tabs'`, leaving everything else as it is. For configs clients send (after
 * validation against DashboardConfigInput) and configs read back from storage, which may predate
 * 0.4.0. Null or undefined give null. The argument is never mutated: changed objects are copies,
 * and the argument itself is returned when there is nothing to convert.
 */
export function normalizeDashboardConfig(value: unknown): DashboardConfig | null {
  if (value === null || value === undefined) return null;
  if (!isObject(value) || !Array.isArray(value.widgets)) return value as DashboardConfig;
  const widgets: unknown[] = value.widgets;
  const converted = widgets.map(convertWidget);
  if (converted.every((widget, i) => widget === widgets[i])) return value as DashboardConfig;
  return { ...value, widgets: converted } as DashboardConfig;
}

/** A dashboard with its `config` normalized as by `normalizeDashboardConfig`; null or undefined give null. */
export function normalizeDashboard(value: unknown): Dashboard | null {
  if (value === null || value === undefined) return null;
  if (!isObject(value) || !isObject(value.config)) return value as Dashboard;
  const config = normalizeDashboardConfig(value.config);
  return (config === value.config ? value : { ...value, config }) as Dashboard;
}
