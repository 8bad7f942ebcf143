import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../server/test/server-env.js';
import { OPERATIONS_MODULE, renderOperations } from '../scripts/generate-operations.js';
import { NOT_IN_CLI, OPERATION_COMMANDS } from '../src/operation-commands.js';
import { coveredBy } from '../src/operations.js';
import { buildProgram } from '../src/program.js';
import { firstExample } from '../src/resource/command.js';

/**
 * Every operation of the OpenAPI document is reachable from some command, hand-written or
 * generated, or is named in NOT_IN_CLI with the reason a terminal is the wrong place for it.
 * No server: the command tree and the document are compared as they are.
 */

const document = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'packages/server/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, { operationId?: string }>>;
};
const documented = Object.values(document.paths).flatMap((item) => Object.values(item).flatMap((operation) => operation.operationId ?? []));

interface Node {
  path: string[];
  command: Command;
}

function walk(command: Command, prefix: string[] = []): Node[] {
  return command.commands.flatMap((child) => {
    const childPath = [...prefix, child.name()];
    return [{ path: childPath, command: child }, ...walk(child, childPath)];
  });
}

const program = buildProgram();
const nodes = walk(program);

/** operationId → the commands that call it. */
const coverage = new Map<string, string[]>();
for (const node of nodes) for (const id of coveredBy(node.command)) coverage.set(id, [...(coverage.get(id) ?? []), node.path.join(' ')]);

function helpOf(command: Command): string {
  let text = '';
  command.configureOutput({ writeOut: (chunk) => (text += chunk), writeErr: (chunk) => (text += chunk) });
  command.outputHelp();
  return text;
}

describe('every operation is reachable from the CLI', () => {
  it('each operation of the document has a command, or a reason in NOT_IN_CLI', () => {
    const missing = documented.filter((id) => !coverage.has(id) && !(id in NOT_IN_CLI));
    expect(missing, 'operations with no command: add a row to OPERATION_COMMANDS (src/operation-commands.ts) or covers() on the command that calls it').toEqual(
      [],
    );
    expect(documented.length).toBeGreaterThan(200);
  });

  it('no command or allow-list entry names an operation the document lacks, and nothing is both covered and allow-listed', () => {
    const known = new Set(documented);
    expect([...coverage.keys()].filter((id) => !known.has(id))).toEqual([]);
    expect(Object.keys(NOT_IN_CLI).filter((id) => !known.has(id))).toEqual([]);
    expect(Object.keys(NOT_IN_CLI).filter((id) => coverage.has(id))).toEqual([]);
    for (const [id, reason] of Object.entries(NOT_IN_CLI)) expect(reason, id).toMatch(/\S{3}/);
    // The allow-list stays short: anything an API key can call gets a command.
    expect(Object.keys(NOT_IN_CLI).length).toBeLessThanOrEqual(15);
  });

  it('each generated row makes its command, with the operation’s path parameters as arguments in path order', () => {
    const paths = JSON.stringify(Object.entries(document.paths));
    for (const row of OPERATION_COMMANDS) {
      const node = nodes.find((n) => n.path.join(' ') === row.command.join(' '));
      expect(node, row.command.join(' ')).toBeDefined();
      expect(coveredBy(node!.command), `"mapi ${row.command.join(' ')}" is hand-written: make it cover ${row.operationId}`).toContain(row.operationId);
      expect(firstExample(node!.command), `"mapi ${row.command.join(' ')}" is hand-written now: remove its row from OPERATION_COMMANDS`).toBeDefined();
      expect(paths).toContain(`"operationId":"${row.operationId}"`);
    }
    const addMembers = nodes.find((n) => n.path.join(' ') === 'groups remove-member')!.command;
    expect(addMembers.registeredArguments.map((a) => a.name())).toEqual(['groupId', 'userId']);
    expect(new Set(OPERATION_COMMANDS.map((row) => row.operationId)).size).toBe(OPERATION_COMMANDS.length);
  });
});

describe('the generated operations module', () => {
  it('is what `npm run openapi` makes of the committed document', async () => {
    expect(fs.readFileSync(OPERATIONS_MODULE, 'utf8'), 'run `npm run openapi` and commit packages/cli/src/generated/operations.ts').toBe(
      await renderOperations(),
    );
  });
});

describe('the command tree', () => {
  it('no two commands share a name (or alias) under one parent', () => {
    for (const parent of [program, ...nodes.map((n) => n.command)]) {
      const names = parent.commands.flatMap((c) => [c.name(), ...c.aliases()]);
      expect(
        names.filter((name, i) => names.indexOf(name) !== i),
        `under "${parent.name()}"`,
      ).toEqual([]);
    }
    const paths = nodes.map((n) => n.path.join(' '));
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('every command has a description, and its help an example that runs it', () => {
    for (const node of nodes) {
      const name = `mapi ${node.path.join(' ')}`;
      expect(node.command.description(), name).toMatch(/\w{3}/);
      const help = helpOf(node.command);
      expect(help, name).toMatch(/^Examples?:$/m);
      expect(help, name).toContain(name);
    }
  });

  it('destructive generated commands take --yes, downloads --out and cursor lists --all', () => {
    const options = (words: string) =>
      nodes
        .find((n) => n.path.join(' ') === words)!
        .command.options.map((o) => o.long)
        .filter(Boolean);
    expect(options('groups delete')).toContain('--yes');
    expect(options('embed sessions revoke')).toContain('--yes');
    expect(options('groups list')).toEqual(expect.arrayContaining(['--first', '--after', '--all']));
    expect(options('groups create')).toEqual(expect.arrayContaining(['--data', '--file', '--set']));
    expect(options('groups get')).not.toContain('--yes');
  });
});
