import { Type, type Static } from 'typebox';

/** One file of a deployment's repository, as the builds and the routes hand it over. */
export const ModelFileSchema = Type.Object(
  {
    path: Type.String({ minLength: 1, description: 'Repository-relative path, e.g. model/cubes/orders.yml' }),
    content: Type.String(),
  },
  { additionalProperties: false },
);
export type ModelFile = Static<typeof ModelFileSchema> & {
  /**
   * The file's size in bytes when its content was not read because it is over MAX_MODEL_FILE_BYTES
   * (a pushed blob: git reports the size without reading it). The file is then an error.
   */
  unreadBytes?: number;
};

/**
 * The largest model file read: the files API's limit (MAX_FILE_BYTES), which pushes are held to
 * here. A blob in a pushed pack may be far bigger than the pack (a compressed run of one byte).
 */
export const MAX_MODEL_FILE_BYTES = 1024 * 1024;

export type ModelFileKind = 'yaml' | 'js' | 'template';

const MODEL_EXTENSION = /\.(ya?ml|js)$/i;
/**
 * `cube.js` at the root of a project is the semantic layer's configuration file, not a model
 * file; it may require packages and read the environment, and is never part of the model.
 */
const CONFIGURATION_FILES = new Set(['cube.js']);

/**
 * Which files of a repository the semantic layer reads as its model: YAML and JavaScript files in
 * any directory. Hidden files and directories (`.github/workflows/*.yml`) and installed packages
 * (`node_modules/`) are tooling, not model.
 */
export function isModelFile(path: string): boolean {
  const normalized = path.replace(/\\/g, '/').replace(/^\.\//, '');
  if (!MODEL_EXTENSION.test(normalized) || CONFIGURATION_FILES.has(normalized)) return false;
  return normalized.split('/').every((segment) => segment !== 'node_modules' && !segment.startsWith('.'));
}

/** Jinja tags: the semantic layer renders such a file before it reads it as YAML. */
const TEMPLATE_TAG = /\{\{|\{%/;

/**
 * How a model file is checked. A YAML file with Jinja tags is a template: what it says is only
 * known once rendered with the runtime's context, so like a JavaScript file it is not read here.
 */
export function modelFileKind(file: ModelFile): ModelFileKind {
  if (/\.js$/i.test(file.path)) return 'js';
  return TEMPLATE_TAG.test(file.content) ? 'template' : 'yaml';
}
