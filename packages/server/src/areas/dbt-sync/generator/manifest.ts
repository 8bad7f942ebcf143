import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Type, type Static, type TProperties, type TSchema } from 'typebox';

/**
 * The parts of dbt's manifest (schema v12, https://schemas.getdbt.com/dbt/manifest/v12.json) that
 * the generator reads, checked before anything is generated so a wrong manifest is one clear 400.
 * Everything else a manifest holds is allowed and ignored: real manifests carry hundreds of keys.
 */

const Open = <T extends TProperties>(properties: T) => Type.Object(properties, { additionalProperties: true });
const Opt = <T extends TSchema>(schema: T) => Type.Optional(schema);
const OptText = Opt(Type.Union([Type.String(), Type.Null()]));

const Column = Open({
  name: Type.String({ minLength: 1 }),
  description: OptText,
  data_type: OptText,
  tags: Opt(Type.Array(Type.String())),
});

const Node = Open({
  unique_id: Type.String({ minLength: 1 }),
  resource_type: Type.String(),
  name: Type.String({ minLength: 1 }),
  package_name: Opt(Type.String()),
  path: Opt(Type.String()),
  original_file_path: Opt(Type.String()),
  database: OptText,
  schema: OptText,
  alias: OptText,
  relation_name: OptText,
  description: OptText,
  tags: Opt(Type.Array(Type.String())),
  columns: Opt(Type.Record(Type.String(), Column)),
  config: Opt(Open({ enabled: Opt(Type.Boolean()) })),
  depends_on: Opt(Open({ nodes: Opt(Type.Array(Type.String())) })),
  column_name: OptText,
  attached_node: OptText,
  test_metadata: Opt(Type.Union([Open({ name: Type.String(), namespace: OptText, kwargs: Opt(Type.Record(Type.String(), Type.Unknown())) }), Type.Null()])),
});

export const ManifestSchema = Open({
  metadata: Open({
    dbt_schema_version: Type.String({ pattern: '^https://schemas\\.getdbt\\.com/dbt/manifest/v\\d+\\.json$' }),
    dbt_version: Opt(Type.String()),
    generated_at: Opt(Type.String()),
  }),
  nodes: Type.Record(Type.String(), Node),
  sources: Opt(Type.Record(Type.String(), Type.Unknown())),
  macros: Opt(Type.Record(Type.String(), Type.Unknown())),
});

export type Manifest = Static<typeof ManifestSchema>;
export type ManifestNode = Static<typeof Node>;
export type ManifestColumn = Static<typeof Column>;

/** Compiled on first use: most processes never read a manifest. */
let compiledCheck: ValidateFunction<Manifest> | undefined;
const manifestCheck = (): ValidateFunction<Manifest> => (compiledCheck ??= new Ajv({ allErrors: true, strict: false }).compile<Manifest>(ManifestSchema));

/** A part of the manifest that is missing or of the wrong type: `pointer` in JSON Pointer syntax from the manifest's root. */
export interface ManifestProblem {
  pointer: string;
  message: string;
}

/** At most this many problems are named; a manifest of another tool would otherwise list thousands. */
const MAX_PROBLEMS = 20;

function describe(error: ErrorObject): ManifestProblem {
  const at = error.instancePath;
  switch (error.keyword) {
    case 'required':
      return { pointer: `${at}/${String((error.params as { missingProperty: string }).missingProperty)}`, message: 'is required' };
    case 'type':
      return { pointer: at, message: `must be ${String((error.params as { type: string }).type)}` };
    case 'pattern':
      return { pointer: at, message: 'must be a dbt manifest schema URL such as https://schemas.getdbt.com/dbt/manifest/v12.json' };
    default:
      return { pointer: at, message: error.message ?? 'is not valid' };
  }
}

/** The manifest, or the problems found in the parts the generator reads. */
export function checkManifest(value: unknown): { manifest: Manifest; problems: [] } | { manifest: null; problems: ManifestProblem[] } {
  const check = manifestCheck();
  if (check(value)) return { manifest: value, problems: [] };
  const seen = new Set<string>();
  const problems: ManifestProblem[] = [];
  // anyOf/union noise: keep the first message per location.
  for (const error of check.errors ?? []) {
    if (error.keyword === 'anyOf') continue;
    const problem = describe(error);
    if (seen.has(problem.pointer)) continue;
    seen.add(problem.pointer);
    problems.push(problem);
    if (problems.length === MAX_PROBLEMS) break;
  }
  return { manifest: null, problems };
}
