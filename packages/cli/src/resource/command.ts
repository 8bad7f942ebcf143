/**
 * A generated command: its arguments, options and help from the operation's entry in
 * src/generated/operations.ts, its action the generic executor. Names come from the curated table
 * (src/operation-commands.ts); everything else from the document, so a new query parameter or
 * body field reaches the CLI with `npm run openapi`.
 */
import { Option, type Command } from 'commander';
import { connect } from '../config.js';
import { run } from '../context.js';
import { UsageError } from '../errors.js';
import { parseId } from '../items.js';
import { covers, type OperationId } from '../operations.js';
import { canPrompt, confirm } from '../prompt.js';
import { buildBody } from './body.js';
import { checkOut, execute, type OperationRequest } from './execute.js';
import type { OperationSpec, ParameterSpec } from './spec.js';

/** Options every generated command may have; a query parameter of the same name would be shadowed. */
const RESERVED = new Set(['data', 'file', 'set', 'all', 'out', 'force', 'yes', 'json', 'help']);

const kebab = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/_/g, '-')
    .toLowerCase();

/** What a person types for a path parameter in an example: ids are numbers, the rest placeholders. */
function exampleValue(param: ParameterSpec, index: number): string {
  if (param.type === 'integer') return String(index + 1);
  if (param.enum?.length) return param.enum[0] as string;
  return `<${param.name}>`;
}

/** Operations that take something away ask first on a terminal, as `mapi delete` does. */
export function isDestructive(operationId: string, spec: OperationSpec): boolean {
  return spec.method === 'DELETE' || /^(revoke|deactivate|remove|delete)/.test(operationId);
}

function describe(spec: OperationSpec): string {
  const summary = spec.summary.replace(/^Extension:\s*/, '');
  return summary ? summary.charAt(0).toUpperCase() + summary.slice(1) : `${spec.method} ${spec.path}`;
}

/** The first example of each generated command, for the help of the group it is in. */
const firstExamples = new WeakMap<Command, string>();

export function firstExample(command: Command): string | undefined {
  return firstExamples.get(command);
}

function examplesOf(path: string[], spec: OperationSpec, paged: boolean): string[] {
  const args = spec.pathParams.map(exampleValue).join(' ');
  const base = ['mapi', ...path, ...(args ? [args] : [])].join(' ');
  const examples = [base];
  const firstField = spec.bodyFields?.find((field) => field.required) ?? spec.bodyFields?.[0];
  if (firstField) {
    const typed: Record<string, string> = { integer: '1', number: '1', boolean: 'true', array: "'[1,2]'", object: `'{...}'` };
    const value = typed[firstField.type] ?? (firstField.type.includes('|') ? (firstField.type.split('|')[0] as string) : 'NAME');
    examples[0] = `${base} --set ${value.startsWith("'") ? `'${firstField.name}=${value.slice(1)}` : `${firstField.name}=${value}`}`;
  }
  if (spec.body !== 'none' && spec.body !== 'unsupported') examples.push(`${base} --file body.yaml`);
  if (spec.response === 'binary') examples[0] = `${base} --out file`;
  else if (paged) examples.push(`${base} --all --json | jq '.[]'`);
  else examples.push(`${base} --json | jq .`);
  return examples;
}

function helpText(path: string[], spec: OperationSpec, destructive: boolean, examples: string[]): string {
  const lines = [''];
  lines.push(`Calls ${spec.method} ${spec.path}.`);
  if (spec.bodyFields?.length) {
    lines.push('', 'Body fields (--data JSON, --file JSON or YAML, then --set key=value, merged in that order):');
    for (const field of spec.bodyFields) lines.push(`  ${field.name}  ${field.type}${field.required ? ', required' : ''}`);
  } else if (spec.body === 'required' || spec.body === 'optional') {
    lines.push('', `Body: JSON with --data or --file (JSON or YAML)${spec.body === 'required' ? ', required' : ''}.`);
  }
  if (destructive) lines.push('', 'On a terminal this asks for confirmation unless --yes is given.');
  lines.push('', 'Examples:', ...examples.map((example) => `  $ ${example}`), '');
  return lines.join('\n');
}

function queryOption(param: ParameterSpec): Option {
  const flag = `--${kebab(param.name)}`;
  const description = param.description ?? param.name;
  if (param.type === 'boolean') return new Option(`${flag} [bool]`, `${description} (true or false; the flag alone: true)`);
  if (param.type === 'array') return new Option(`${flag} <value>`, `${description} (repeatable)`).argParser((v: string, prev: string[] = []) => [...prev, v]);
  const option = new Option(`${flag} <${param.type === 'integer' || param.type === 'number' ? 'n' : 'value'}>`, description);
  return param.enum?.length ? option.choices(param.enum) : option;
}

function queryValue(param: ParameterSpec, value: unknown): unknown {
  const flag = `--${kebab(param.name)}`;
  if (param.type === 'boolean') {
    if (value === true || value === 'true') return true;
    if (value === 'false') return false;
    throw new UsageError(`${flag} takes true or false, got "${String(value)}".`);
  }
  if (param.type === 'integer' || param.type === 'number') {
    const number = Number(value);
    if (String(value).trim() === '' || !Number.isFinite(number) || (param.type === 'integer' && !Number.isInteger(number)))
      throw new UsageError(`${flag} must be ${param.type === 'integer' ? 'an integer' : 'a number'}, got "${String(value)}".`);
    return number;
  }
  return value;
}

function pathValue(param: ParameterSpec, value: string): string | number {
  if (param.type === 'integer') return parseId(value, param.name);
  if (value.trim() === '') throw new UsageError(`${param.name} is empty.`);
  return value;
}

interface GeneratedOptions {
  data?: string;
  file?: string;
  set?: string[];
  all?: boolean;
  out?: string;
  force?: boolean;
  yes?: boolean;
  [query: string]: unknown;
}

/** Adds the command `name` under `parent` for one operation and returns it. */
export function addOperationCommand(parent: Command, path: string[], operationId: OperationId, spec: OperationSpec): Command {
  const name = path.at(-1) as string;
  const destructive = isDestructive(operationId, spec);
  const paged = spec.response === 'json' && spec.query.some((q) => q.name === 'after');
  const hasBody = spec.body === 'required' || spec.body === 'optional';
  const command = parent.command(name).description(describe(spec));
  for (const param of spec.pathParams)
    command.argument(`<${param.name}>`, param.description ?? (param.type === 'integer' ? `${param.name} (a positive integer)` : param.name));
  const options = new Map<string, ParameterSpec>();
  for (const param of spec.query) {
    if (RESERVED.has(kebab(param.name))) throw new Error(`${operationId}: query parameter ${param.name} clashes with a generated command's own option.`);
    const option = queryOption(param);
    if (param.required) option.makeOptionMandatory();
    command.addOption(option);
    options.set(option.attributeName(), param);
  }
  if (hasBody) {
    command
      .option('--data <json>', 'the body as JSON')
      .option('--file <file>', 'the body from a JSON or YAML file (- reads stdin)')
      .option(
        '--set <key=value>',
        'a body field (repeatable; dotted keys nest; numbers, true, false, null and JSON are typed)',
        (v: string, prev: string[] = []) => [...prev, v],
      );
  }
  if (paged) command.option('--all', 'follow the cursor and print every page (with --json: one array of all items)');
  if (spec.response === 'binary')
    command.option('--out <file>', 'where to write the downloaded file (- for stdout)').option('--force', 'replace an existing --out file');
  if (destructive) command.option('-y, --yes', 'do not ask for confirmation on a terminal');
  const examples = examplesOf(path, spec, paged);
  firstExamples.set(command, examples[0] as string);
  command.addHelpText('after', helpText(path, spec, destructive, examples));
  covers(command, operationId);

  command.action(
    run(async (context, ...rest: unknown[]) => {
      const opts = rest.at(-1) as GeneratedOptions;
      const args = rest.slice(0, spec.pathParams.length) as string[];
      // Everything is checked before anything is sent: a usage error never reaches the server.
      const request: OperationRequest = { path: {}, query: {} };
      spec.pathParams.forEach((param, i) => (request.path[param.name] = pathValue(param, args[i] as string)));
      for (const [attribute, param] of options) if (opts[attribute] !== undefined) request.query[param.name] = queryValue(param, opts[attribute]);
      if (hasBody) {
        const body = buildBody({
          ...(opts.data !== undefined ? { data: opts.data } : {}),
          ...(opts.file !== undefined ? { file: opts.file } : {}),
          set: opts.set ?? [],
        });
        if (body === undefined && spec.body === 'required')
          throw new UsageError(
            `${['mapi', ...path].join(' ')} needs a body: give --data, --file or --set.`,
            `\`mapi ${path.join(' ')} --help\` lists the fields.`,
          );
        if (body !== undefined) request.body = body;
      }
      if (spec.response === 'binary') checkOut(opts.out, opts.force === true);
      const client = spec.public ? connect(context.config(), { anonymous: true }) : context.client();
      // Only ask when someone can answer: stdin is a terminal that does not carry the body.
      if (destructive && !opts.yes && canPrompt() && opts.file !== '-') {
        const what = [...path, ...args].join(' ');
        if (!(await confirm(`${describe(spec)}: ${what}?`))) throw new UsageError('Nothing changed.');
      }
      const out = opts.out;
      await execute(
        client,
        spec,
        request,
        { json: context.json, all: opts.all === true, ...(out !== undefined ? { out } : {}), force: opts.force === true },
        `Done: ${[...path, ...args].join(' ')}`,
      );
    }),
  );
  return command;
}
