/**
 * Writes src/generated/operations.ts from the server's OpenAPI document (`npm run openapi` runs it
 * after the document is regenerated): per operationId, what the CLI's generated commands need to
 * build a request and print its answer. The CLI reads this table, never the document, so the
 * document does not ship with the CLI and a command's shape changes only when the document does.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import prettier from 'prettier';

const here = path.dirname(fileURLToPath(import.meta.url));
const documentPath = path.join(here, '../../server/openapi.json');
const outputPath = path.join(here, '../src/generated/operations.ts');

type Schema = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

const document = JSON.parse(fs.readFileSync(documentPath, 'utf8')) as {
  paths: Record<string, Record<string, any>>;
  components?: { schemas?: Record<string, Schema> };
};

/** A schema with its $ref followed (bodies refer to components.schemas). */
function resolve(schema: Schema | undefined): Schema {
  let current = schema ?? {};
  for (let depth = 0; typeof current.$ref === 'string' && depth < 8; depth++)
    current = document.components?.schemas?.[current.$ref.split('/').at(-1) as string] ?? {};
  return current;
}

/** The top-level fields of an object body, for the command's help: what `--set` can name. */
function bodyFields(schema: Schema | undefined): { name: string; type: string; required?: true }[] | undefined {
  const body = resolve(schema);
  if (body.type !== 'object' || !body.properties) return undefined;
  const required = new Set<string>(body.required ?? []);
  return Object.entries(body.properties as Record<string, Schema>).map(([name, field]) => {
    const resolved = resolve(field);
    const type = Array.isArray(resolved.enum)
      ? resolved.enum.map(String).join('|')
      : kindOf(resolved).type === 'string' && resolved.type === 'object'
        ? 'object'
        : ((Array.isArray(resolved.type) ? resolved.type.find((t: string) => t !== 'null') : resolved.type) ?? 'value');
    return { name, type: String(type), ...(required.has(name) ? { required: true as const } : {}) };
  });
}

/** A parameter's value type as a command line types it: enums listed, nullable and anyOf read as their first type. */
function kindOf(schema: Schema): { type: string; enum?: string[] } {
  if (Array.isArray(schema.enum)) return { type: 'string', enum: schema.enum.filter((v: unknown) => v !== null).map(String) };
  if (Array.isArray(schema.anyOf)) {
    const values = schema.anyOf.flatMap((s: Schema) => (Array.isArray(s.enum) ? s.enum : s.const !== undefined ? [s.const] : []));
    if (values.length > 0 && values.length === schema.anyOf.length) return { type: 'string', enum: values.map(String) };
    return kindOf(schema.anyOf.find((s: Schema) => s.type !== 'null') ?? {});
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  if (type === 'array') return { type: 'array', ...(schema.items ? { enum: kindOf(schema.items).enum } : {}) };
  return { type: ['integer', 'number', 'boolean'].includes(type) ? type : 'string' };
}

const isJson = (contentType: string) => contentType === 'application/json' || contentType.endsWith('+json');

const operations: Record<string, unknown> = {};
for (const [pathname, item] of Object.entries(document.paths)) {
  for (const method of METHODS) {
    const operation = item[method];
    if (!operation?.operationId) continue;
    const parameters: Schema[] = [...(item.parameters ?? []), ...(operation.parameters ?? [])];
    // Path parameters in the order the path names them: that is the order of the command's arguments.
    const pathParams = [...pathname.matchAll(/\{([^}]+)\}/g)].map(([, name]) => {
      const parameter = parameters.find((p) => p.in === 'path' && p.name === name) ?? { schema: {} };
      return { name, ...kindOf(parameter.schema ?? {}), ...(parameter.description ? { description: parameter.description } : {}) };
    });
    const query = parameters
      .filter((p) => p.in === 'query')
      .map((p) => ({
        name: p.name as string,
        ...kindOf(p.schema ?? {}),
        ...(p.required ? { required: true } : {}),
        ...(p.description ? { description: p.description as string } : {}),
      }));
    const bodyTypes = Object.keys(operation.requestBody?.content ?? {});
    const body = !operation.requestBody ? 'none' : !bodyTypes.some(isJson) ? 'unsupported' : operation.requestBody.required ? 'required' : 'optional';
    const fields = body === 'none' || body === 'unsupported' ? undefined : bodyFields(operation.requestBody.content[bodyTypes.find(isJson) as string]?.schema);
    const answers = Object.entries(operation.responses ?? {}).filter(([status]) => /^2/.test(status));
    const answerTypes = answers.flatMap(([, answer]) => Object.keys((answer as Schema).content ?? {}));
    const response = answerTypes.some(isJson) ? 'json' : answerTypes.length > 0 ? 'binary' : 'empty';
    operations[operation.operationId] = {
      method: method.toUpperCase(),
      path: pathname,
      tag: operation.tags?.[0] ?? '',
      summary: operation.summary ?? '',
      pathParams,
      query,
      body,
      ...(fields ? { bodyFields: fields } : {}),
      response,
      ...(Array.isArray(operation.security) && operation.security.length === 0 ? { public: true } : {}),
    };
  }
}

/** The module's text, formatted as the repository formats code; a test compares it with the committed file. */
export async function renderOperations(): Promise<string> {
  const source = `// Generated by packages/cli/scripts/generate-operations.ts from packages/server/openapi.json (npm run openapi). Do not edit.
import type { OperationId } from '../operations.js';
import type { OperationSpec } from '../resource/spec.js';

export const OPERATIONS: Record<OperationId, OperationSpec> = ${JSON.stringify(operations)};
`;
  const options = await prettier.resolveConfig(outputPath);
  return prettier.format(source, { ...options, filepath: outputPath });
}

export const OPERATIONS_MODULE = outputPath;

// Run as a script (npm run openapi), not when a test imports it.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fs.mkdirSync(path.dirname(outputPath), { recursive: true });
  fs.writeFileSync(outputPath, await renderOperations());
  console.log(`wrote ${path.relative(process.cwd(), outputPath)}: ${Object.keys(operations).length} operations`);
}
