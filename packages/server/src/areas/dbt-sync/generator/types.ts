/** The dimension types a warehouse column maps to. */
export type DimensionType = 'number' | 'time' | 'boolean' | 'string';

const NUMERIC = new Set([
  'int',
  'integer',
  'bigint',
  'smallint',
  'tinyint',
  'byteint',
  'mediumint',
  'hugeint',
  'int2',
  'int4',
  'int8',
  'int16',
  'int32',
  'int64',
  'int128',
  'uint8',
  'uint16',
  'uint32',
  'uint64',
  'number',
  'numeric',
  'decimal',
  'bignumeric',
  'bigdecimal',
  'float',
  'float4',
  'float8',
  'float32',
  'float64',
  'double',
  'double precision',
  'real',
  'money',
  'smallmoney',
  'serial',
  'bigserial',
  'smallserial',
]);
const TEMPORAL = new Set([
  'date',
  'datetime',
  'datetime2',
  'smalldatetime',
  'datetimeoffset',
  'timestamp',
  'timestamptz',
  'timestamp_ntz',
  'timestamp_ltz',
  'timestamp_tz',
]);
const BOOLEAN = new Set(['boolean', 'bool', 'bit']);

/**
 * A column's dimension type from its `data_type` as the warehouse spells it: numeric types →
 * `number`; dates and timestamps (with or without a time zone) → `time`; booleans → `boolean`;
 * anything else, and a column with no type, → `string`. Parameters and case are ignored
 * (`NUMERIC(12,2)`, `TIMESTAMP WITH TIME ZONE`, `Nullable(Int64)`).
 */
export function dimensionType(dataType: string | null | undefined): DimensionType {
  if (!dataType) return 'string';
  let type = dataType.trim().toLowerCase();
  const wrapped = /^(?:nullable|lowcardinality)\((.*)\)$/.exec(type);
  if (wrapped?.[1]) type = wrapped[1].trim();
  type = type
    .replace(/\(.*\)/, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (/^timestamp(\s|$)/.test(type) || /^datetime64/.test(type)) return 'time';
  if (TEMPORAL.has(type)) return 'time';
  if (NUMERIC.has(type) || /^(?:u?int|float|decimal)\d*$/.test(type)) return 'number';
  if (BOOLEAN.has(type)) return 'boolean';
  return 'string';
}
