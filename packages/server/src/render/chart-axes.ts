/**
 * Axis defaults a chart's data decides, added where the spec's author said nothing: integer ticks
 * for integer-valued measures (a count has no half orders) and category labels rotated only when
 * they do not fit side by side. Pure, like chart-spec.ts, which the embedded page bundles.
 */

type Row = Record<string, unknown>;
type Spec = Record<string, unknown>;

const isObject = (value: unknown): value is Spec => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Vega-Lite's field name (`orders\.count`) as the row key it reads (`orders.count`). */
const unescape = (field: string) => field.replace(/\\(.)/g, '$1');

/**
 * Whether a measure is integer-valued: every value it has in the rows is a whole number (numbers,
 * or numeric strings as some drivers answer big integers), and it has at least one. The rows decide,
 * not the member's type: the runtime's annotation types every aggregation as `number`, a count
 * included, and what is drawn is these rows. A count or count-distinct always passes, and so does a
 * sum of whole amounts, whose ticks should be whole too.
 */
export function integerValued(rows: Row[], name: string): boolean {
  let seen = false;
  for (const row of rows) {
    const value = row[name];
    if (value === null || value === undefined) continue;
    const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n)) return false;
    seen = true;
  }
  return seen;
}

/** Aggregations whose result over integers is an integer. */
const WHOLE_AGGREGATES = new Set([undefined, 'sum', 'min', 'max', 'count', 'valid', 'missing', 'distinct']);
/** Aggregations that count rows, whatever the field holds. */
const COUNTING = new Set(['count', 'valid', 'missing', 'distinct']);

/** Font size of axis labels (chart-spec.ts's config), and the width of one of its characters in DejaVu Sans, as page.ts estimates it. */
export const LABEL_FONT_SIZE = 10;
const LABEL_CHAR_WIDTH = LABEL_FONT_SIZE * 0.6;
/** What a chart's width loses to the y axis (its labels and title) and padding before the x axis' bands. */
const Y_AXIS_ALLOWANCE = 60;
/** Space kept between two horizontal labels. */
const LABEL_GAP = 4;
/** The angle of labels that do not fit side by side: diagonal reads better than vertical and takes less height. */
export const ROTATED_LABEL_ANGLE = -45;

/**
 * Whether category labels fit side by side on an x axis `width` pixels wide (the chart's): each
 * label, at its estimated width, within its band (the plot's width over the categories).
 */
export function labelsFit(labels: string[], width: number): boolean {
  if (labels.length === 0) return true;
  const band = Math.max(0, width - Y_AXIS_ALLOWANCE) / labels.length;
  const widest = Math.max(...labels.map((l) => l.length * LABEL_CHAR_WIDTH));
  return widest + LABEL_GAP <= band;
}

const distinctLabels = (rows: Row[], name: string) => [
  ...new Set(
    rows
      .map((row) => row[name])
      .filter((v) => v !== null && v !== undefined)
      .map(String),
  ),
];

/** One channel's definition with the defaults its data gives, the author's own settings kept. */
function tuneChannel(channel: 'x' | 'y', def: Spec, rows: Row[], width: number): Spec {
  if (def.axis === null) return def;
  const axis = isObject(def.axis) ? def.axis : {};
  const name = typeof def.field === 'string' ? unescape(def.field) : undefined;
  const aggregate = typeof def.aggregate === 'string' ? def.aggregate : undefined;
  if (def.type === 'quantitative' && def.bin === undefined) {
    const whole = (aggregate !== undefined && COUNTING.has(aggregate)) || (name !== undefined && WHOLE_AGGREGATES.has(aggregate) && integerValued(rows, name));
    if (whole) return { ...def, axis: { tickMinStep: 1, format: ',d', ...axis } };
  }
  if (
    channel === 'x' &&
    (def.type === 'nominal' || def.type === 'ordinal') &&
    def.timeUnit === undefined &&
    name !== undefined &&
    axis.labelAngle === undefined
  ) {
    const labels = distinctLabels(rows, name);
    return { ...def, axis: { ...axis, labelAngle: labelsFit(labels, width) ? 0 : ROTATED_LABEL_ANGLE } };
  }
  return def;
}

/**
 * The spec with its x and y axes given integer ticks and fitting label angles, for a single view
 * or the layers of one (a concatenation, facet or repeat shares its width out in ways this does not
 * follow, so their axes stay as Vega-Lite makes them).
 */
export function tuneAxes(spec: Spec, rows: Row[], width: number): Spec {
  const tuneUnit = (unit: Spec): Spec => {
    let out = unit;
    if (isObject(unit.encoding)) {
      const encoding = { ...unit.encoding };
      for (const channel of ['x', 'y'] as const) {
        const def = encoding[channel];
        if (isObject(def)) encoding[channel] = tuneChannel(channel, def, rows, width);
      }
      out = { ...out, encoding };
    }
    if (Array.isArray(unit.layer)) out = { ...out, layer: unit.layer.map((layer: unknown) => (isObject(layer) ? tuneUnit(layer) : layer)) };
    return out;
  };
  return tuneUnit(spec);
}
