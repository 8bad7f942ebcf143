import { Type, type Static } from 'typebox';

/** One file of a deployment's repository, as the builds and the routes hand it over. */
export const ModelFileSchema = Type.Object(
  {
    path: Type.String({ minLength: 1, description: 'Repository-relative path, e.g. model/cubes/orders.yml' }),
    content: Type.String(),
  },
  { additionalProperties: false },
);
export type ModelFile = Static<typeof ModelFileSchema>;

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
