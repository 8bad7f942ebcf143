import type { FastifyInstance } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { beforeAll, describe, expect, it } from 'vitest';
import { contentSchemas, normalizeDashboard, normalizeDashboardConfig, type Dashboard, type DashboardConfig } from '../src/areas/workspace/content.schemas.js';
import { fieldErrors, installValidators } from '../src/http/validation.js';

type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null };
type Compiler = (route: { schema: TSchema; httpPart: string }) => Validate;

/** Compiles schemas with the very validator request bodies get (Ajv, no coercion, all errors). */
let compileBody: (schema: TSchema) => Validate;

beforeAll(() => {
  let compiler: Compiler | undefined;
  const app = { setValidatorCompiler: (c: Compiler) => (compiler = c) } as unknown as FastifyInstance;
  installValidators(app, contentSchemas);
  compileBody = (schema) => compiler!({ schema, httpPart: 'body' });
});

/** Field errors as the API would report them, e.g. `/body/widgets/0/position/x`. */
function check(id: string, value: unknown): { valid: boolean; errors: { pointer: string; message: string }[] } {
  const validate = compileBody(Type.Ref(id));
  const valid = validate(value);
  return { valid, errors: valid ? [] : fieldErrors((validate.errors ?? []) as never, 'body') };
}
const expectValid = (id: string, value: unknown) => expect(check(id, value)).toEqual({ valid: true, errors: [] });
const expectInvalidAt = (id: string, value: unknown, pointer: string) => {
  const result = check(id, value);
  expect(result.valid).toBe(false);
  expect(result.errors.map((e) => e.pointer)).toContain(pointer);
};

const position = { x: 0, y: 0, w: 6, h: 4 };

const fullConfig = {
  title: 'Sales',
  description: null,
  kind: 'APP',
  app: {
    entry: 'index.tsx',
    files: { 'index.tsx': 'export default () => null;' },
    html: null,
    manifest: { dependencies: { react: '^19.0.0' }, version: 2 },
  },
  layout: {
    breakpoints: { lg: 1200, md: 996, sm: 768, xs: 480, xxs: null },
    cols: { lg: 12, md: 10, sm: 6, xs: 4, xxs: 2 },
    containerPadding: [10, 10],
    margin: [8, 8],
    rowHeight: 30,
  },
  settings: { refresh: 60 },
  theme: null,
  widgets: [
    {
      id: 'w1',
      type: 'CHART',
      position,
      config: { reportId: 7 },
      style: null,
      responsiveLayouts: { lg: position, md: null, sm: { x: 0, y: 4, w: 6, h: 4 } },
    },
    { id: 'w2', type: 'CONTAINER', position: { x: 6, y: 0, w: 6, h: 8 }, config: { layout: 'tabs' } },
    { id: 'w3', type: 'DIVIDER', position: { x: 0, y: 8, w: 12, h: 1 }, responsiveLayouts: null },
  ],
};

const snapshot = {
  id: 1,
  reportId: 2,
  versionNumber: 3,
  name: 'Revenue',
  title: null,
  kind: 'table',
  meta: { source: 'sql' },
  spec: { mark: 'bar' },
  isSourceReport: true,
  fillMissingRows: { member: 'orders.created_at', excludedDimensions: ['orders.status'] },
  periodComparisons: [{ measure: 'orders.total', timeDimension: 'orders.created_at', offset: { amount: 1, unit: 'year' }, outputs: null }],
  preferences: { columnFormats: { total: { type: 'currency', decimalPlaces: 2 }, share: { type: 'percent', decimalPlaces: null } } },
};

const dashboard = {
  id: 10,
  publicId: 'd_abc',
  deploymentId: 1,
  workbookId: 5,
  status: 'published',
  allowEmbed: false,
  config: fullConfig,
  versionNumber: 4,
  versionId: 40,
  reportSnapshots: [snapshot],
  createdBy: null,
  description: null,
  title: 'Sales',
};

const withWidget = (widget: Record<string, unknown>) => ({ widgets: [{ id: 'w', type: 'TEXT', position, ...widget }] });

describe('dashboard config', () => {
  it('spec: DashboardConfig, a full config passes, as input and as advertised', () => {
    expectValid('DashboardConfig', fullConfig);
    expectValid('DashboardConfigInput', fullConfig);
  });

  it('spec: DashboardConfig, all fields optional and nullable as listed', () => {
    expectValid('DashboardConfig', {});
    expectValid('DashboardConfig', { title: null, description: null, kind: null, app: null, layout: null, settings: null, theme: null, widgets: null });
    expectValid('DashboardConfig', { kind: 'CLASSIC', app: {}, layout: {}, widgets: [] });
  });

  it('spec: DashboardConfig, kind is CLASSIC, APP or null', () => {
    expectInvalidAt('DashboardConfig', { kind: 'GRID' }, '/body/kind');
    expectInvalidAt('DashboardConfig', { title: 5 }, '/body/title');
    expectInvalidAt('DashboardConfig', { settings: 'dark' }, '/body/settings');
  });

  it('spec: DashboardConfig, fields a newer client sends are accepted (not rejected, not dropped)', () => {
    const config = { ...fullConfig, grid: { snap: true }, widgets: [{ id: 'w', type: 'TEXT', position, locked: true }] };
    expectValid('DashboardConfigInput', config);
    expect(normalizeDashboardConfig(config)).toBe(config);
  });

  it('spec: DashboardWidget, a widget needs id, type and position', () => {
    expectInvalidAt('DashboardConfig', { widgets: [{ type: 'TEXT', position }] }, '/body/widgets/0/id');
    expectInvalidAt('DashboardConfig', { widgets: [{ id: 'w', position }] }, '/body/widgets/0/type');
    expectInvalidAt('DashboardConfig', { widgets: [{ id: 'w', type: 'TEXT' }] }, '/body/widgets/0/position');
    expectInvalidAt('DashboardConfig', withWidget({ id: 3 }), '/body/widgets/0/id');
  });

  it('spec: DashboardWidgetPosition, x, y, w, h are all required', () => {
    for (const key of ['x', 'y', 'w', 'h'] as const) {
      const { [key]: _omitted, ...rest } = position;
      expectInvalidAt('DashboardConfig', withWidget({ position: rest }), `/body/widgets/0/position/${key}`);
      expectInvalidAt('DashboardWidgetPosition', rest, `/body/${key}`);
    }
  });

  it('spec: DashboardWidgetPosition, x, y, w, h are integers (no coercion of strings, no fractions)', () => {
    expectInvalidAt('DashboardConfig', withWidget({ position: { ...position, w: 1.5 } }), '/body/widgets/0/position/w');
    expectInvalidAt('DashboardConfig', withWidget({ position: { ...position, x: '0' } }), '/body/widgets/0/position/x');
    expectInvalidAt('DashboardConfig', withWidget({ position: null }), '/body/widgets/0/position');
  });

  it('spec: DashboardWidget, an unknown widget type is rejected', () => {
    expectInvalidAt('DashboardConfig', withWidget({ type: 'IFRAME' }), '/body/widgets/0/type');
    expectInvalidAt('DashboardConfigInput', withWidget({ type: 'IFRAME' }), '/body/widgets/0/type');
    expectInvalidAt('DashboardConfig', withWidget({ type: 'chart' }), '/body/widgets/0/type');
  });

  it('spec: DashboardWidget, every advertised type is accepted', () => {
    for (const type of ['CHART', 'TEXT', 'FILTER', 'AI', 'TIME_GRAIN', 'PARENT', 'SPACER', 'DIVIDER', 'CONTAINER']) {
      expectValid('DashboardConfig', withWidget({ type }));
    }
  });

  it('spec: DashboardWidget and Versioning, TABS_CONTAINER is accepted as input and not advertised', () => {
    const legacy = withWidget({ type: 'TABS_CONTAINER', config: { tabs: ['a', 'b'] } });
    expectValid('DashboardConfigInput', legacy);
    expectValid('DashboardWidgetInput', legacy.widgets[0]);
    expectInvalidAt('DashboardConfig', legacy, '/body/widgets/0/type');
    expectInvalidAt('DashboardWidget', legacy.widgets[0], '/body/type');
  });

  it('spec: DashboardWidget, config and style are objects or null', () => {
    expectValid('DashboardConfig', withWidget({ config: null, style: { color: 'red' } }));
    expectInvalidAt('DashboardConfig', withWidget({ config: 'tabs' }), '/body/widgets/0/config');
    expectInvalidAt('DashboardConfig', withWidget({ style: [] }), '/body/widgets/0/style');
  });

  it('spec: DashboardWidget, responsiveLayouts keys are positions or null', () => {
    expectValid('DashboardConfig', withWidget({ responsiveLayouts: { xxs: null, xs: position } }));
    expectInvalidAt('DashboardConfig', withWidget({ responsiveLayouts: { md: { x: 0, y: 0, w: 1 } } }), '/body/widgets/0/responsiveLayouts/md/h');
    expectInvalidAt('DashboardConfig', withWidget({ responsiveLayouts: { sm: 3 } }), '/body/widgets/0/responsiveLayouts/sm');
    expectInvalidAt('DashboardConfig', withWidget({ responsiveLayouts: [] }), '/body/widgets/0/responsiveLayouts');
  });

  it('spec: DashboardAppSource, entry at most 255 characters', () => {
    expectValid('DashboardAppSource', { entry: 'a'.repeat(255) });
    expectInvalidAt('DashboardAppSource', { entry: 'a'.repeat(256) }, '/body/entry');
    expectInvalidAt('DashboardConfig', { app: { entry: 'a'.repeat(256) } }, '/body/app/entry');
    expectValid('DashboardAppSource', { entry: null, files: null, html: null, manifest: null });
  });

  it('spec: DashboardAppSource, files map strings to strings; manifest version is an integer', () => {
    expectInvalidAt('DashboardAppSource', { files: { 'a.ts': 1 } }, '/body/files/a.ts');
    expectInvalidAt('DashboardAppSource', { manifest: { version: 1.5 } }, '/body/manifest/version');
    expectInvalidAt('DashboardAppSource', { manifest: { dependencies: { react: 19 } } }, '/body/manifest/dependencies/react');
  });

  it('spec: DashboardLayout, breakpoints and cols keys are integers or null', () => {
    expectValid('DashboardLayout', { breakpoints: { lg: 1200, md: null }, cols: null });
    expectInvalidAt('DashboardLayout', { breakpoints: { lg: 1200.5 } }, '/body/breakpoints/lg');
    expectInvalidAt('DashboardLayout', { breakpoints: { sm: '768' } }, '/body/breakpoints/sm');
    expectInvalidAt('DashboardLayout', { cols: { xxs: 'two' } }, '/body/cols/xxs');
  });

  it('spec: DashboardLayout, containerPadding and margin are arrays of integers; rowHeight an integer', () => {
    expectInvalidAt('DashboardLayout', { containerPadding: [10, 'x'] }, '/body/containerPadding/1');
    expectInvalidAt('DashboardLayout', { margin: 8 }, '/body/margin');
    expectInvalidAt('DashboardLayout', { rowHeight: 30.5 }, '/body/rowHeight');
  });
});

describe('report snapshot', () => {
  it('spec: ReportSnapshot, a full snapshot passes; only id, reportId and versionNumber are required', () => {
    expectValid('ReportSnapshot', snapshot);
    expectValid('ReportSnapshot', { id: 1, reportId: 2, versionNumber: 1 });
    for (const key of ['id', 'reportId', 'versionNumber']) {
      expectInvalidAt('ReportSnapshot', { id: 1, reportId: 2, versionNumber: 1, [key]: undefined }, `/body/${key}`);
    }
  });

  it('spec: ReportSnapshot and Versioning, kind sankey is accepted and an unknown kind rejected', () => {
    expectValid('ReportSnapshot', { ...snapshot, kind: 'sankey' });
    expectValid('ReportSnapshot', { ...snapshot, kind: null });
    for (const kind of ['vega', 'table', 'kpi', 'html', 'map']) expectValid('ReportSnapshot', { ...snapshot, kind });
    expectInvalidAt('ReportSnapshot', { ...snapshot, kind: 'pie' }, '/body/kind');
  });

  it('spec: ReportSnapshot, spec is a string, an object or null', () => {
    expectValid('ReportSnapshot', { ...snapshot, spec: '{"mark":"bar"}' });
    expectValid('ReportSnapshot', { ...snapshot, spec: null });
    expectInvalidAt('ReportSnapshot', { ...snapshot, spec: 3 }, '/body/spec');
  });

  it('spec: ReportSnapshot, columnFormats type is currency, percent or number, and required', () => {
    const formats = (format: unknown) => ({ ...snapshot, preferences: { columnFormats: { total: format } } });
    expectValid('ReportSnapshot', formats({ type: 'number' }));
    expectInvalidAt('ReportSnapshot', formats({ type: 'date' }), '/body/preferences/columnFormats/total/type');
    expectInvalidAt('ReportSnapshot', formats({ decimalPlaces: 2 }), '/body/preferences/columnFormats/total/type');
    expectInvalidAt('ReportSnapshot', formats({ type: 'percent', decimalPlaces: 1.5 }), '/body/preferences/columnFormats/total/decimalPlaces');
    expectValid('ReportSnapshot', { ...snapshot, preferences: null });
  });

  it('spec: ReportSnapshot, periodComparisons need measure, timeDimension and offset {amount integer, unit}', () => {
    const comparison = { measure: 'm', timeDimension: 't', offset: { amount: 1, unit: 'month' } };
    const withComparison = (c: unknown) => ({ ...snapshot, periodComparisons: [c] });
    expectValid('ReportSnapshot', withComparison(comparison));
    expectValid('ReportSnapshot', withComparison({ ...comparison, outputs: ['delta', 'percent'] }));
    for (const key of ['measure', 'timeDimension', 'offset']) {
      expectInvalidAt('ReportSnapshot', withComparison({ ...comparison, [key]: undefined }), `/body/periodComparisons/0/${key}`);
    }
    expectInvalidAt('ReportSnapshot', withComparison({ ...comparison, offset: { amount: 1.5, unit: 'month' } }), '/body/periodComparisons/0/offset/amount');
    expectInvalidAt('ReportSnapshot', withComparison({ ...comparison, offset: { amount: 1 } }), '/body/periodComparisons/0/offset/unit');
    expectInvalidAt('ReportSnapshot', withComparison({ ...comparison, offset: { unit: 'month' } }), '/body/periodComparisons/0/offset/amount');
    expectInvalidAt('ReportSnapshot', withComparison({ ...comparison, outputs: [1] }), '/body/periodComparisons/0/outputs/0');
  });

  it('spec: ReportSnapshot, fillMissingRows requires member', () => {
    expectValid('ReportSnapshot', { ...snapshot, fillMissingRows: { member: 'm' } });
    expectValid('ReportSnapshot', { ...snapshot, fillMissingRows: { member: 'm', excludedDimensions: null } });
    expectInvalidAt('ReportSnapshot', { ...snapshot, fillMissingRows: { excludedDimensions: [] } }, '/body/fillMissingRows/member');
    expectInvalidAt('ReportSnapshot', { ...snapshot, fillMissingRows: { member: 'm', excludedDimensions: [2] } }, '/body/fillMissingRows/excludedDimensions/0');
  });
});

describe('dashboard', () => {
  it('spec: Dashboard, a full dashboard passes', () => {
    expectValid('Dashboard', dashboard);
  });

  it('spec: Dashboard, required fields are required', () => {
    for (const key of ['id', 'publicId', 'deploymentId', 'workbookId', 'status', 'allowEmbed', 'config', 'versionNumber', 'versionId', 'reportSnapshots']) {
      expectInvalidAt('Dashboard', { ...dashboard, [key]: undefined }, `/body/${key}`);
    }
  });

  it('spec: Dashboard, status is draft, published or archived; config is a DashboardConfig', () => {
    for (const status of ['draft', 'published', 'archived']) expectValid('Dashboard', { ...dashboard, status });
    expectInvalidAt('Dashboard', { ...dashboard, status: 'deleted' }, '/body/status');
    expectInvalidAt('Dashboard', { ...dashboard, config: null }, '/body/config');
    expectInvalidAt('Dashboard', { ...dashboard, config: withWidget({ type: 'TABS_CONTAINER' }) }, '/body/config/widgets/0/type');
    expectInvalidAt('Dashboard', { ...dashboard, reportSnapshots: [{ id: 1 }] }, '/body/reportSnapshots/0/reportId');
  });
});

describe('TABS_CONTAINER conversion', () => {
  const legacyConfig = () => ({
    title: 'Tabs',
    widgets: [
      { id: 'a', type: 'TEXT', position, config: { text: 'hi' } },
      { id: 't', type: 'TABS_CONTAINER', position, config: { tabs: [{ title: 'One' }], layout: 'grid' }, style: { border: 1 } },
      { id: 'n', type: 'TABS_CONTAINER', position, config: null },
      { id: 'u', type: 'TABS_CONTAINER', position },
    ],
  });

  it('spec: DashboardWidget, TABS_CONTAINER becomes a CONTAINER with config.layout tabs, other config kept', () => {
    const result = normalizeDashboardConfig(legacyConfig());
    expect(result).toEqual({
      title: 'Tabs',
      widgets: [
        { id: 'a', type: 'TEXT', position, config: { text: 'hi' } },
        { id: 't', type: 'CONTAINER', position, config: { tabs: [{ title: 'One' }], layout: 'tabs' }, style: { border: 1 } },
        { id: 'n', type: 'CONTAINER', position, config: { layout: 'tabs' } },
        { id: 'u', type: 'CONTAINER', position, config: { layout: 'tabs' } },
      ],
    });
    expectValid('DashboardConfig', result);
  });

  it('spec: DashboardWidget, conversion does not mutate its argument', () => {
    const input = legacyConfig();
    const before = structuredClone(input);
    const result = normalizeDashboardConfig(input);
    expect(input).toEqual(before);
    expect(result).not.toBe(input);
    expect(result?.widgets?.[0]).toBe(input.widgets[0]);
  });

  it('spec: DashboardConfig, null and undefined give null; configs without legacy widgets are returned as given', () => {
    expect(normalizeDashboardConfig(null)).toBeNull();
    expect(normalizeDashboardConfig(undefined)).toBeNull();
    const config: DashboardConfig = structuredClone(fullConfig) as DashboardConfig;
    expect(normalizeDashboardConfig(config)).toBe(config);
    expect(normalizeDashboardConfig({ widgets: null })).toEqual({ widgets: null });
    expect(normalizeDashboardConfig({})).toEqual({});
  });

  it('spec: Dashboard, normalizeDashboard converts the config of a stored dashboard', () => {
    const stored = { ...dashboard, config: legacyConfig() };
    const before = structuredClone(stored);
    const result: Dashboard | null = normalizeDashboard(stored);
    expect(stored).toEqual(before);
    expect(result).toEqual({ ...dashboard, config: normalizeDashboardConfig(legacyConfig()) });
    expect(result?.config.widgets?.map((w) => w.type)).toEqual(['TEXT', 'CONTAINER', 'CONTAINER', 'CONTAINER']);
    expectValid('Dashboard', result);
    expect(normalizeDashboard(null)).toBeNull();
    expect(normalizeDashboard(undefined)).toBeNull();
    expect(normalizeDashboard(dashboard)).toBe(dashboard);
  });
});
