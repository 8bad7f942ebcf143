import type { ErrorObject } from 'ajv';
import { describePath, fieldPath } from './describe.js';
import { modelError, type ModelError } from './errors.js';
import { IDENTIFIER } from './model-schema.js';
import { locate, type ParsedFile, type Path } from './parse.js';
import { didYouMean } from './suggest.js';

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  number: 'a number',
  integer: 'a whole number',
};

type Schema = Record<string, unknown>;

/** `/cubes/0/measures/2/type` -> ['cubes', 0, 'measures', 2, 'type'] (list indexes as numbers, as the data has them). */
function toPath(root: unknown, instancePath: string): Path {
  const path: Array<string | number> = [];
  let value: unknown = root;
  for (const raw of instancePath.split('/').slice(1)) {
    const step = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const key = Array.isArray(value) ? Number(step) : step;
    path.push(key);
    value = (value as Record<string | number, unknown> | undefined)?.[key];
  }
  return path;
}

/**
 * A union (`"*"` or a list) fails as a whole and in each branch. When the value has the shape of
 * exactly one branch (a list, not a string), that branch's own errors say what is wrong; else one
 * message says which forms the union accepts. Either way, the other errors of the union go.
 */
function pruneUnions(errors: ErrorObject[]): ErrorObject[] {
  const dropped = new Set<ErrorObject>();
  const unions = errors.filter((e) => e.keyword === 'anyOf').sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  for (const union of unions) {
    if (dropped.has(union)) continue;
    const prefix = `${union.schemaPath}/`;
    const branches = new Map<string, ErrorObject[]>();
    for (const error of errors) {
      if (!error.schemaPath.startsWith(prefix)) continue;
      const branch = error.schemaPath.slice(prefix.length).split('/')[0]!;
      branches.set(branch, [...(branches.get(branch) ?? []), error]);
    }
    const shapeFits = [...branches.entries()].filter(
      ([branch, list]) =>
        !list.some((e) => e.instancePath === union.instancePath && (e.schemaPath === `${prefix}${branch}/type` || e.schemaPath === `${prefix}${branch}/const`)),
    );
    if (shapeFits.length === 1) {
      dropped.add(union);
      for (const [branch, list] of branches) if (branch !== shapeFits[0]![0]) list.forEach((e) => dropped.add(e));
    } else {
      for (const list of branches.values()) list.forEach((e) => dropped.add(e));
    }
  }
  return errors.filter((e) => !dropped.has(e));
}

function describeValue(value: unknown): string {
  return typeof value === 'string' ? `"${value}"` : (JSON.stringify(value) ?? String(value));
}

/** One Ajv error as a sentence, and where in the file it points. */
function translate(file: ParsedFile, error: ErrorObject): ModelError {
  const path = toPath(file.value, error.instancePath);
  const { subject, rest } = describePath(file.value, path);
  const field = fieldPath(rest);
  const on = field ? `${subject}: "${field}"` : subject;
  const parent = (error.parentSchema ?? {}) as Schema;
  const expected = typeof parent['x-expected'] === 'string' ? parent['x-expected'] : null;
  const at = (options = {}, target: Path = path) => locate(file, target, options);
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String((error.params as { additionalProperty: string }).additionalProperty);
      const known = Object.keys((parent.properties ?? {}) as Schema);
      return modelError(file.path, `${on} has unknown key "${key}"${didYouMean(key, known)}`, at({ key: true }, [...path, key]));
    }
    case 'required':
      return modelError(file.path, `${on} is missing "${(error.params as { missingProperty: string }).missingProperty}"`, at());
    case 'enum': {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues.map(String);
      const hint = typeof error.data === 'string' ? didYouMean(error.data, allowed) : '';
      return modelError(
        file.path,
        `${subject} has unknown ${field || 'value'} ${describeValue(error.data)}; expected one of ${expected ?? allowed.join(', ')}${hint}`,
        at(),
      );
    }
    case 'type':
      return modelError(
        file.path,
        `${on} must be ${TYPE_WORDS[String((error.params as { type: string }).type)] ?? (error.params as { type: string }).type}`,
        at(),
      );
    case 'pattern': {
      const what =
        parent.pattern === IDENTIFIER
          ? 'a name of letters, digits and underscores, not starting with a digit'
          : 'a dotted path of such names (cube.joined_cube)';
      return modelError(file.path, `${on} ${describeValue(error.data)} is not ${what}`, at());
    }
    case 'minLength':
      return modelError(file.path, `${on} must not be empty`, at());
    case 'anyOf':
      return modelError(file.path, `${on} must be ${expected ?? 'one of the accepted forms'}`, at());
    default:
      return modelError(file.path, `${on} ${error.message ?? 'is not valid'}`, at());
  }
}

export function schemaErrors(file: ParsedFile, errors: ErrorObject[]): ModelError[] {
  return pruneUnions(errors).map((error) => translate(file, error));
}
