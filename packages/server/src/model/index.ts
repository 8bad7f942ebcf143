/**
 * The data-model validator: what the semantic layer would reject in a deployment's model files,
 * found before a build runs them, each error with its file, line and column. Pure: files in,
 * errors and the compiled model out, no I/O.
 *
 * @example
 * const result = validateModel([{ path: 'model/cubes/orders.yml', content: 'cubes:\n  - name: orders\n    sql_table: orders\n' }]);
 * result.valid; // true
 * result.artifact?.cubes[0]?.name; // 'orders'
 */
import { buildArtifact, type ModelArtifact } from './artifact.js';
import { checkCycles } from './cycles.js';
import { modelError, sortedUnique, type ModelError } from './errors.js';
import { MAX_MODEL_FILE_BYTES, modelFileKind, type ModelFile } from './files.js';
import { checkJsFile } from './js-files.js';
import { checkMemberLists } from './member-lists.js';
import type { RawCube, RawModelFile, RawView } from './model-schema.js';
import { parseYamlFile, type ParsedFile } from './parse.js';
import { checkReferences } from './references.js';
import { Report } from './report.js';
import { checkEntityRules } from './rules.js';
import { checkStructure, type Broken } from './structure.js';
import { entityOf, register, resolveExtends, type Model } from './symbols.js';
import { exposeViews } from './views.js';

const JS_UNSUPPORTED =
  'JavaScript model files (cube(...), view(...)) are not supported: write the model in YAML (cubes: and views: in .yml files), which this platform compiles; the JavaScript would have to run to define its cubes.';
const TEMPLATE_UNSUPPORTED = 'YAML with Jinja templates ({% ... %}, {{ ... }}) is not supported: write the cubes and views out in plain YAML.';

export type {
  CompiledCube,
  CompiledDimension,
  CompiledJoin,
  CompiledMeasure,
  CompiledPreAggregation,
  CompiledSegment,
  CompiledView,
  CompiledViewMember,
  ModelArtifact,
  Relationship,
} from './artifact.js';
export { ModelErrorSchema, type ModelError } from './errors.js';
export { isModelFile, MAX_MODEL_FILE_BYTES, ModelFileSchema, type ModelFile } from './files.js';

export interface ModelValidation {
  valid: boolean;
  errors: ModelError[];
  /** Cubes (not views) in the YAML files that could be read. */
  cubesCount: number;
  /** The compiled model; null when there are errors. */
  artifact: ModelArtifact | null;
}

interface ReadFile {
  parsed: ParsedFile;
  content: RawModelFile;
  broken: Broken;
}

/** Reads every file once: JavaScript and templates are syntax-checked or set aside, YAML is parsed and checked against the schema. */
function readFiles(files: ModelFile[], model: Model, report: Report): { read: ReadFile[]; cubesCount: number } {
  const read: ReadFile[] = [];
  let cubesCount = 0;
  const ordered = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const file of ordered) {
    const bytes = file.unreadBytes ?? Buffer.byteLength(file.content, 'utf8');
    if (bytes > MAX_MODEL_FILE_BYTES) {
      model.openWorld = true;
      report.add([modelError(file.path, `The file is ${bytes} bytes; a model file may hold at most ${MAX_MODEL_FILE_BYTES}.`)]);
      continue;
    }
    const kind = modelFileKind(file);
    if (kind !== 'yaml') {
      // The runtime compiles YAML cubes and views only: a model written in JavaScript, or YAML
      // rendered from a Jinja template, would build and then lack the cubes it defines.
      model.openWorld = true;
      const syntax = kind === 'js' ? checkJsFile(file) : [];
      report.add(syntax.length > 0 ? syntax : [modelError(file.path, kind === 'js' ? JS_UNSUPPORTED : TEMPLATE_UNSUPPORTED, { line: 1, column: 1 })]);
      continue;
    }
    const { parsed, errors } = parseYamlFile(file);
    report.add(errors);
    if (!parsed) {
      model.openWorld = true;
      continue;
    }
    const { content, errors: structural, broken } = checkStructure(parsed);
    report.add(structural);
    if (!content) continue;
    cubesCount += Array.isArray(content.cubes) ? content.cubes.length : 0;
    read.push({ parsed, content, broken });
  }
  return { read, cubesCount };
}

/**
 * Validates a deployment's model files together: each file's syntax and structure, then names,
 * references, joins, view join paths, `extends` and cycles across all of them. Errors are sorted
 * by file, line and column; the artifact is built only when there are none.
 */
export function validateModel(files: ModelFile[]): ModelValidation {
  const report = new Report();
  const model: Model = { byName: new Map(), entities: [], openWorld: false };
  const { read, cubesCount } = readFiles(files, model, report);
  for (const { parsed, content, broken } of read) {
    for (const list of ['cubes', 'views'] as const) {
      const entries: unknown = content[list];
      if (!Array.isArray(entries)) continue;
      entries.forEach((raw: unknown, i) => {
        if (typeof raw !== 'object' || raw === null) return;
        const opaque = broken.wholeFile || broken.entities.has(`${list}/${i}`);
        const items = new Set([...broken.items].filter((key) => key.startsWith(`${list}/${i}/`)).map((key) => key.slice(`${list}/${i}/`.length)));
        register(model, entityOf(list === 'cubes' ? 'cube' : 'view', raw as RawCube | RawView, parsed, [list, i], opaque, items), report);
      });
    }
  }
  for (const entity of model.entities) checkEntityRules(entity, report);
  resolveExtends(model, report);
  exposeViews(model, report);
  const graph = checkReferences(model, report);
  checkMemberLists(model, report);
  checkCycles(graph, report);
  const errors = sortedUnique(report.errors);
  const valid = errors.length === 0;
  return { valid, errors, cubesCount, artifact: valid ? buildArtifact(model) : null };
}
