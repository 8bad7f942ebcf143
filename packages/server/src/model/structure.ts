import type { ErrorObject } from 'ajv';
import { modelError, type ModelError } from './errors.js';
import { modelFileValidator, type RawModelFile } from './model-schema.js';
import { locate, type ParsedFile } from './parse.js';
import { schemaErrors } from './schema-errors.js';

/**
 * Which parts of a file broke the schema. A broken part is known by its name only, and nothing
 * is concluded from its contents: their shape is wrong. Parts are as small as can be, so one
 * misspelt key in a measure hides nothing else of its cube, and nothing of the rest of the file.
 */
export interface Broken {
  /** The top level itself is wrong (`cubes:` is not a list): nothing in the file is read. */
  wholeFile: boolean;
  /** `cubes/0`: a cube or view whose own name, extends or lists are wrong. */
  entities: Set<string>;
  /** `cubes/0/measures/2`: one entry of one of its lists. */
  items: Set<string>;
}

/** Lists whose entries are checked one by one. */
const ITEM_LISTS = new Set(['measures', 'dimensions', 'segments', 'joins', 'pre_aggregations', 'hierarchies', 'access_policy', 'cubes', 'folders']);
/** Keys of a cube or view that later checks read (if at all) defensively, so a wrong value there breaks nothing else. */
const HARMLESS_KEYS = new Set([
  'title',
  'description',
  'public',
  'shown',
  'meta',
  'data_source',
  'sql_alias',
  'calendar',
  'rewrite_queries',
  'aliases',
  'sql',
  'sql_table',
  'refresh_key',
]);

function brokenParts(errors: ErrorObject[]): Broken {
  const broken: Broken = { wholeFile: false, entities: new Set(), items: new Set() };
  for (const error of errors) {
    const match = /^\/(cubes|views)\/(\d+)(?:\/([^/]+)(?:\/(\d+))?)?/.exec(error.instancePath);
    if (!match) {
      broken.wholeFile = true;
      continue;
    }
    const entity = `${match[1]}/${match[2]}`;
    const key = match[3];
    if (key === undefined) {
      if (error.keyword !== 'additionalProperties') broken.entities.add(entity);
    } else if (ITEM_LISTS.has(key) && match[4] !== undefined) {
      broken.items.add(`${entity}/${key}/${match[4]}`);
    } else if (!HARMLESS_KEYS.has(key)) {
      broken.entities.add(entity);
    }
  }
  return broken;
}

export interface Structure {
  /** The file's data; null when it is not a model file at all (nothing under `cubes:` or `views:`). */
  content: RawModelFile | null;
  errors: ModelError[];
  broken: Broken;
}

const NOTHING_BROKEN: Broken = { wholeFile: false, entities: new Set(), items: new Set() };

export function checkStructure(file: ParsedFile): Structure {
  const value = file.value;
  // An empty file (or one of comments only) defines nothing, and the semantic layer skips it too.
  if (value === null || value === undefined) return { content: null, errors: [], broken: NOTHING_BROKEN };
  const top = typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  if (!top || (!('cubes' in top) && !('views' in top))) {
    const message = 'A model file must be a mapping with a "cubes:" list, a "views:" list or both at its top level';
    return { content: null, errors: [modelError(file.path, message, locate(file, []))], broken: NOTHING_BROKEN };
  }
  const validateModelFileContent = modelFileValidator();
  if (validateModelFileContent(value)) return { content: value, errors: [], broken: NOTHING_BROKEN };
  const ajvErrors = validateModelFileContent.errors ?? [];
  return { content: value as RawModelFile, errors: schemaErrors(file, ajvErrors), broken: brokenParts(ajvErrors) };
}
