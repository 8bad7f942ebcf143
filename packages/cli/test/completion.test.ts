import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../src/program.js';
import { removeTempDirs, runCli, show, tempDir } from './helpers.js';

/**
 * `mapi completion bash|zsh|fish`. The bash script runs in a real bash; zsh and fish are not on
 * the test machines, so their scripts are checked against the commands and options that `--help`
 * lists, command by command, and for the shape zsh's compdef and fish's complete read.
 */

const execBash = promisify(execFile);

interface HelpNode {
  path: string[];
  commands: string[];
  /** Spellings of the command's own options (--branch, -f), with --help/-h. */
  options: string[];
}

/** The named section of a help text ("Options:", "Commands:"), to the next unindented line. */
function section(help: string, title: string): string {
  return help.split(new RegExp(`^${title}:$`, 'm'))[1]?.split(/^\S/m)[0] ?? '';
}

function parseHelp(pathWords: string[], help: string): HelpNode {
  const commands = [...section(help, 'Commands').matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1] as string).filter((c) => c !== 'help');
  const options = [...section(help, 'Options').matchAll(/^ {2}(?:(-[A-Za-z]), )?(--[a-z][a-z-]*)/gm)].flatMap((m) => [m[2] as string, ...(m[1] ? [m[1]] : [])]);
  return { path: pathWords, commands, options };
}

/**
 * Every command, found by reading each command's help as `mapi ... --help` prints it, from the top.
 * The help comes from the program itself (the same text commander prints), not from a process per
 * command: the tree has a few hundred commands.
 */
function helpTree(): HelpNode[] {
  const nodes: HelpNode[] = [];
  const visit = (command: Command, pathWords: string[]) => {
    const node = parseHelp(pathWords, command.helpInformation());
    nodes.push(node);
    for (const name of node.commands) {
      const child = command.commands.find((c) => c.name() === name);
      expect(child, `${[...pathWords, name].join(' ')} is listed by --help`).toBeDefined();
      visit(child!, [...pathWords, name]);
    }
  };
  visit(buildProgram(), []);
  return nodes;
}

afterAll(removeTempDirs);

describe('mapi completion', () => {
  let tree: HelpNode[];
  const scripts: Record<string, string> = {};
  let bashFile: string;
  const GLOBALS = ['--url', '--token', '--ca-cert', '--profile', '--json', '--version', '-V'];

  beforeAll(async () => {
    tree = helpTree();
    for (const shell of ['bash', 'zsh', 'fish']) {
      const result = await runCli(['completion', shell]);
      expect(result.code, show(result)).toBe(0);
      scripts[shell] = result.stdout;
    }
    bashFile = path.join(tempDir(), 'mapi.bash');
    fs.writeFileSync(bashFile, scripts.bash as string);
  }, 300_000);

  /** COMPREPLY after sourcing the script in bash and completing `line` (a trailing space starts a new word). */
  async function complete(lines: string[]): Promise<string[][]> {
    const program = [
      `source ${JSON.stringify(bashFile)}`,
      ...lines.map((line) => {
        const words = line.split(' ');
        return `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _mapi; echo "\${COMPREPLY[*]}"`;
      }),
    ].join('\n');
    const { stdout } = await execBash('bash', ['--norc', '--noprofile', '-c', program], { env: { PATH: process.env.PATH ?? '' } });
    return stdout
      .split('\n')
      .slice(0, lines.length)
      .map((line) => (line === '' ? [] : line.split(' ')));
  }

  it('bash completes commands at the top, a group, a subcommand, options, and skips option values', async () => {
    const [top, mo, modelC, branch, afterProfile, groups, optionValue, apiOptions] = await complete([
      'mapi ',
      'mapi mo',
      'mapi model cl',
      'mapi model clone 1 --b',
      'mapi --profile model mo',
      'mapi embed groups ',
      'mapi model clone --branch ',
      'mapi api GET /api/v1/users/me -',
    ]);
    expect(top).toEqual(expect.arrayContaining(['login', 'model', 'api', 'completion', 'git-credential']));
    expect(mo?.sort()).toEqual(['model', 'move']);
    expect(modelC).toEqual(['clone']);
    expect(branch).toEqual(['--branch']);
    // "model" there is the value of --profile, so the words complete at the top again.
    expect(afterProfile?.sort()).toEqual(['model', 'move']);
    expect(groups?.sort()).toEqual(['add', 'create', 'delete', 'get', 'list', 'ls', 'members', 'remove', 'update']);
    // A value: nothing offered, so bash falls back to file names.
    expect(optionValue).toEqual([]);
    expect(apiOptions).toEqual(expect.arrayContaining(['--input', '-f', '--raw-field', '-F', '-H', '--include', ...GLOBALS, '--help']));
  });

  it('bash offers, for every command --help lists, exactly its subcommands and its options', async () => {
    expect(tree.map((node) => node.path.join(' '))).toEqual(expect.arrayContaining(['', 'model clone', 'embed groups add', 'api', 'completion']));
    const lines = tree.flatMap((node) => [['mapi', ...node.path, ''].join(' '), ['mapi', ...node.path, '-'].join(' ')]);
    const replies = await complete(lines);
    tree.forEach((node, i) => {
      const commands = replies[2 * i] as string[];
      const options = replies[2 * i + 1] as string[];
      const where = `mapi ${node.path.join(' ')}`;
      // Aliases (ls for list) complete too; --help lists them beside the name.
      for (const command of node.commands) expect(commands, where).toContain(command);
      expect(new Set([...options]), where).toEqual(new Set([...node.options, ...GLOBALS]));
    });
  });

  it('zsh: a #compdef file whose functions cover every command path, subcommand and option', () => {
    const zsh = scripts.zsh as string;
    expect(zsh.split('\n')[0]).toBe('#compdef mapi');
    expect(zsh).toMatch(/\n_mapi\(\) \{\n/);
    expect(zsh.trimEnd().split('\n').at(-1)).toBe('if [[ "${funcstack[1]}" == _mapi ]]; then _mapi "$@"; else compdef _mapi mapi; fi');
    for (const fn of ['_mapi_commands', '_mapi_options', '_mapi_valued']) {
      const body = zsh.split(`${fn}() {`)[1]?.split('\n}\n')[0] ?? '';
      for (const node of tree) expect(body, `${fn} ${node.path.join(' ')}`).toContain(`    '${node.path.join(' ')}') reply=(`);
    }
    for (const node of tree) {
      const arm = (fn: string) =>
        zsh
          .split(`${fn}() {`)[1]
          ?.split('\n')
          .find((line) => line.startsWith(`    '${node.path.join(' ')}') reply=(`)) ?? '';
      for (const command of node.commands) expect(arm('_mapi_commands')).toContain(`'${command}:`);
      for (const option of [...node.options, ...GLOBALS]) expect(arm('_mapi_options')).toContain(`'${option}:`);
    }
  });

  it('fish: complete -c mapi lines, one per subcommand and option of every command path', () => {
    const fish = scripts.fish as string;
    const completes = fish.split('\n').filter((line) => line.startsWith('complete '));
    for (const line of completes)
      expect(line).toMatch(/^complete -c mapi -n '__mapi_at \\'[a-z -]*\\'' (-f -a '[a-z-]+'|(-s [A-Za-z] )?(-l [a-z-]+)( -r)?) -d '.*'$/);
    for (const node of tree) {
      const at = `complete -c mapi -n '__mapi_at \\'${node.path.join(' ')}\\''`;
      const mine = completes.filter((line) => line.startsWith(`${at} `));
      for (const command of node.commands) expect(mine, `${node.path.join(' ')} ${command}`).toContainEqual(expect.stringContaining(` -a '${command}' `));
      for (const option of [...node.options, ...GLOBALS].filter((o) => o.startsWith('--')))
        expect(mine, `${node.path.join(' ')} ${option}`).toContainEqual(expect.stringMatching(new RegExp(` -l ${option.slice(2)}( -r)? -d `)));
    }
    expect(fish).toContain('function __mapi_path\n');
  });

  it('an unknown shell exits 1 naming the ones there are', async () => {
    const result = await runCli(['completion', 'powershell']);
    expect(result.code, show(result)).toBe(1);
    expect(result.stderr).toContain('No completion for "powershell".');
    expect(result.stderr).toContain('bash, zsh, fish');
  });
});
