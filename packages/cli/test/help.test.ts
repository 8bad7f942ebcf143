import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { OPERATION_COMMANDS } from '../src/operation-commands.js';
import { buildProgram } from '../src/program.js';
import { isolatedEnv, removeTempDirs, runCli, show, type CliResult } from './helpers.js';

/**
 * Every hand-written command and group the CLI has; the tests fail when the program has one not
 * here or in the generated table (OPERATION_COMMANDS), whose commands coverage.test.ts checks the
 * help of in-process (spawning each would take minutes).
 */
const COMMANDS: string[][] = [
  [],
  ['login'],
  ['whoami'],
  ['deployments'],
  ['deployments', 'list'],
  ['deployments', 'create'],
  ['folders'],
  ['folders', 'tree'],
  ['folders', 'path'],
  ['folders', 'create'],
  ['workspace'],
  ['workspace', 'ls'],
  ['workspace', 'shared'],
  ['workbooks'],
  ['workbooks', 'put'],
  ['workbooks', 'duplicate'],
  ['workbooks', 'draft-file'],
  ['workbooks', 'draft-file-edit'],
  ['workbooks', 'promote'],
  ['workbooks', 'promotions'],
  ['workbooks', 'promotion-links'],
  ['dashboards'],
  ['dashboards', 'publish'],
  ['dashboards', 'export'],
  ['dashboards', 'export-status'],
  ['dashboards', 'download'],
  ['reports'],
  ['reports', 'placements'],
  ['reports', 'unplace'],
  ['reports', 'file'],
  ['reports', 'file-edit'],
  ['reports', 'in-document'],
  ['move'],
  ['delete'],
  ['model'],
  ['model', 'pull'],
  ['model', 'push'],
  ['model', 'validate'],
  ['model', 'status'],
  ['model', 'clone'],
  ['git-credential'],
  ['git-host'],
  ['git-host', 'status'],
  ['git-host', 'unlink'],
  ['git-host', 'installations'],
  ['git-host', 'repositories'],
  ['git-host', 'branches'],
  ['git-host', 'connect'],
  ['git-host', 'pull'],
  ['env-vars'],
  ['env-vars', 'list'],
  ['env-vars', 'set'],
  ['env-vars', 'delete'],
  ['pods'],
  ['logs'],
  ['dbt-sync'],
  ['dbt-sync', 'start'],
  ['dbt-sync', 'status'],
  ['dbt-sync', 'logs'],
  ['dbt-sync', 'cancel'],
  ['notifications'],
  ['notifications', 'list'],
  ['notifications', 'create'],
  ['notifications', 'get'],
  ['notifications', 'update'],
  ['notifications', 'delete'],
  ['notifications', 'recipients'],
  ['notifications', 'add'],
  ['notifications', 'remove'],
  ['notifications', 'deliveries'],
  ['notifications', 'send-now'],
  ['report-deliveries'],
  ['report-deliveries', 'list'],
  ['report-deliveries', 'create'],
  ['report-deliveries', 'get'],
  ['report-deliveries', 'update'],
  ['report-deliveries', 'delete'],
  ['report-deliveries', 'pause'],
  ['report-deliveries', 'resume'],
  ['report-deliveries', 'run'],
  ['report-deliveries', 'runs'],
  ['agents'],
  ['agents', 'list'],
  ['agents', 'get'],
  ['agents', 'create'],
  ['agents', 'update'],
  ['agents', 'delete'],
  ['agents', 'suggestions'],
  ['chat'],
  ['tasks'],
  ['tasks', 'list'],
  ['tasks', 'get'],
  ['tasks', 'create'],
  ['tasks', 'update'],
  ['tasks', 'delete'],
  ['tasks', 'run'],
  ['tasks', 'runs'],
  ['users'],
  ['users', 'list'],
  ['users', 'create'],
  ['users', 'deactivate'],
  ['api-keys'],
  ['api-keys', 'create'],
  ['api-keys', 'list'],
  ['api-keys', 'revoke'],
  ['audit'],
  ['roles'],
  ['roles', 'list'],
  ['roles', 'get'],
  ['roles', 'create'],
  ['roles', 'update'],
  ['roles', 'delete'],
  ['roles', 'assign'],
  ['roles', 'unassign'],
  ['embed'],
  ['embed', 'tenants'],
  ['embed', 'tenants', 'list'],
  ['embed', 'tenants', 'delete'],
  ['embed', 'users'],
  ['embed', 'users', 'list'],
  ['embed', 'users', 'provision'],
  ['embed', 'users', 'import'],
  ['embed', 'groups'],
  ['embed', 'groups', 'list'],
  ['embed', 'groups', 'create'],
  ['embed', 'groups', 'get'],
  ['embed', 'groups', 'update'],
  ['embed', 'groups', 'delete'],
  ['embed', 'groups', 'members'],
  ['embed', 'groups', 'add'],
  ['embed', 'groups', 'remove'],
  ['embed', 'share'],
  ['embed', 'session'],
  ['ai'],
  ['ai', 'settings'],
  ['ai', 'settings', 'get'],
  ['ai', 'settings', 'set'],
  ['ai', 'usage'],
  ['spec'],
  ['api'],
  ['completion'],
];

/** The generated commands and the groups the table makes for them. */
const GENERATED: string[][] = OPERATION_COMMANDS.flatMap((row) => row.command.map((_, i) => row.command.slice(0, i + 1)));
const ALL = [...new Map([...COMMANDS, ...GENERATED].map((c) => [c.join(' '), c])).values()];

function treePaths(command: Command, prefix: string[] = []): string[] {
  return command.commands.flatMap((child) => [[...prefix, child.name()].join(' '), ...treePaths(child, [...prefix, child.name()])]);
}

/** Command names in the "Commands:" section of a help text. */
function listedCommands(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1]?.split(/^\S/m)[0] ?? '';
  return [...section.matchAll(/^ {2}([a-z-]+)/gm)].map((m) => m[1] as string).filter((name) => name !== 'help');
}

afterAll(removeTempDirs);

describe('help', () => {
  it('the program has exactly the commands listed here and in the generated table', () => {
    expect(treePaths(buildProgram()).sort()).toEqual(
      ALL.filter((c) => c.length > 0)
        .map((c) => c.join(' '))
        .sort(),
    );
  });

  it('every command has help with an example that uses it, and no command goes untested', { timeout: 120_000 }, async () => {
    // The top level through the real binary; the rest from the program itself, as commander prints
    // `--help` (addHelpText included): a process per command would start a few hundred.
    const program = buildProgram();
    const helpOf = (words: string[]): CliResult => {
      let command: Command = program;
      for (const word of words) command = command.commands.find((c) => c.name() === word) as Command;
      let stdout = '';
      command.configureOutput({ writeOut: (text) => (stdout += text) });
      command.outputHelp();
      return { code: 0, stdout, stderr: '' };
    };
    const results = await Promise.all(COMMANDS.map((command) => (command.length === 0 ? runCli(['--help']) : helpOf(command))));
    results.forEach((result, i) => {
      const command = COMMANDS[i] as string[];
      expect(result.code, show(result)).toBe(0);
      expect(result.stdout).toMatch(/^Usage: mapi/m);
      expect(result.stdout).toMatch(/^Examples?:$/m);
      // The example runs this very command (a group's examples run its subcommands).
      expect(result.stdout).toContain(`mapi ${command.join(' ')}`.trimEnd());
      const listed = listedCommands(result.stdout);
      const known = ALL.filter((c) => c.length === command.length + 1 && command.every((part, j) => c[j] === part)).map((c) => c.at(-1));
      expect(listed.sort(), `subcommands of "mapi ${command.join(' ')}"`).toEqual(known.sort());
    });
    // The top-level help documents the exit codes scripts rely on, and the Ctrl-C behaviour.
    expect(results[0]?.stdout).toMatch(/130\s+interrupted with Ctrl-C/);
    expect(results[0]?.stdout).toMatch(/2\s+a bulk move or delete ran, but some items failed/);
  });
});

describe('usage errors and dry runs need no server', () => {
  // Nothing listens on this port: any request would fail with exit 1, so exit 0 proves none was sent.
  const unreachable = isolatedEnv({ MAPI_URL: 'https://127.0.0.1:59999', MAPI_TOKEN: 'mapi_notarealkeynotarealkeynotarealkeynotar' });

  it('a dry run prints the de-duplicated items, the chunks and the destination, and sends nothing', async () => {
    const [text, json] = await Promise.all([
      runCli(['move', '7', '--to', '12', 'folder:3', 'workbook:5', 'FOLDER:3', 'report:9', '--chunk-size', '2', '--dry-run'], { env: unreachable }),
      runCli(['delete', '7', '-', '--dry-run', '--json'], { env: unreachable, input: '["workbook:5", {"type": "report", "id": 9}, "workbook:5"]' }),
    ]);
    expect(text.code, show(text)).toBe(0);
    expect(text.stdout).toContain('Dry run: nothing was sent.');
    expect(text.stdout).toContain('Would move 3 items (1 duplicate left out) to folder 12 in deployment 7, in 2 requests:');
    expect(text.stdout).toMatch(/request 1 of 2 \(2 items\):\n {2}folder:3\n {2}workbook:5\nrequest 2 of 2 \(1 item\):\n {2}report:9/);
    expect(text.stderr).toBe('');
    expect(json.code, show(json)).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      dryRun: true,
      deploymentId: 7,
      items: [
        { type: 'WORKBOOK', id: 5 },
        { type: 'REPORT', id: 9 },
      ],
      duplicates: 1,
      chunks: [
        [
          { type: 'WORKBOOK', id: 5 },
          { type: 'REPORT', id: 9 },
        ],
      ],
    });
  });

  it('bad items, a missing --to and a missing URL exit 1 with what to do next', async () => {
    const [badItem, badLine, noTo, noUrl] = await Promise.all([
      runCli(['move', '1', '--to', 'root', 'folder:3', 'dashboard:4'], { env: unreachable }),
      runCli(['move', '1', '--to', 'root', '-'], { env: unreachable, input: 'folder:3\nworkbook:x\n' }),
      runCli(['move', '1', 'folder:3'], { env: unreachable }),
      runCli(['deployments', 'list']),
    ]);
    expect(badItem.code, show(badItem)).toBe(1);
    expect(badItem.stderr).toContain('item "dashboard:4"');
    expect(badItem.stderr).toContain('folder:12, workbook:7, report:3');
    expect(badLine.code, show(badLine)).toBe(1);
    expect(badLine.stderr).toContain('stdin line 2');
    expect(noTo.code, show(noTo)).toBe(1);
    expect(noTo.stderr).toContain("required option '--to <folder>' not specified");
    expect(noUrl.code, show(noUrl)).toBe(1);
    expect(noUrl.stderr).toContain('No server URL is set.');
    expect(noUrl.stderr).toMatch(/mapi login.*MAPI_URL.*--url/);
  });

  it('stdin with a byte order mark and CRLF line ends reads as TYPE:ID lines or a JSON array', async () => {
    const [lines, json] = await Promise.all([
      runCli(['move', '7', '--to', '12', '-', '--dry-run', '--json'], { env: unreachable, input: '\uFEFFfolder:3\r\n# a comment\r\n\r\nworkbook:5\r\n' }),
      runCli(['delete', '7', '-', '--dry-run', '--json'], { env: unreachable, input: '\uFEFF[\r\n  "report:9",\r\n  {"type": "FOLDER", "id": 3}\r\n]\r\n' }),
    ]);
    expect(lines.code, show(lines)).toBe(0);
    expect(JSON.parse(lines.stdout).items).toEqual([
      { type: 'FOLDER', id: 3 },
      { type: 'WORKBOOK', id: 5 },
    ]);
    expect(json.code, show(json)).toBe(0);
    expect(JSON.parse(json.stdout).items).toEqual([
      { type: 'REPORT', id: 9 },
      { type: 'FOLDER', id: 3 },
    ]);
  });

  it('a JSON object on stdin, such as the output of move --json, is refused with what to pipe instead', async () => {
    const result = { moved: [{ type: 'WORKBOOK', id: 5, folderId: 12 }], failed: [], skipped: [], requests: 1 };
    const piped = await runCli(['move', '7', '--to', 'root', '-'], { env: unreachable, input: `\uFEFF${JSON.stringify(result, null, 2)}\n` });
    expect(piped.code, show(piped)).toBe(1);
    expect(piped.stderr).toContain('stdin holds a JSON object; expected a JSON array of items, or TYPE:ID lines.');
    expect(piped.stderr).toContain('`mapi workspace ls 7 root --refs`');
    expect(piped.stderr).not.toContain('Invalid item reference');
  });

  it('a URL with an /api/v1 suffix or http:// is a usage error naming where it came from, with the address to use', async () => {
    const profileEnv = isolatedEnv({ MAPI_TOKEN: 'mapi_notarealkeynotarealkeynotarealkeynotar' });
    const dir = profileEnv.MAPI_CONFIG_DIR as string;
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'config.json'),
      JSON.stringify({ profiles: { staging: { url: 'https://127.0.0.1:59999/build/api/v1/', token: 'mapi_x' } } }),
      { mode: 0o600 },
    );
    const [suffixFromEnv, httpFromFlag, suffixFromProfile, httpAtLogin] = await Promise.all([
      runCli(['deployments', 'list'], { env: { ...unreachable, MAPI_URL: 'https://127.0.0.1:59999/api/v1' } }),
      runCli(['--url', 'http://127.0.0.1:59999', 'deployments', 'list'], { env: unreachable }),
      runCli(['--profile', 'staging', 'deployments', 'list'], { env: profileEnv }),
      runCli(['login', '--url', 'http://127.0.0.1:59999/api/v1', '--token-stdin'], { input: 'mapi_notarealkeynotarealkeynotarealkeynotar\n' }),
    ]);
    for (const result of [suffixFromEnv, httpFromFlag, suffixFromProfile, httpAtLogin]) {
      expect(result.code, show(result)).toBe(1);
      expect(result.stderr).not.toContain('TypeError');
      expect(result.stderr).not.toContain('cannot reach');
    }
    expect(suffixFromEnv.stderr).toBe(
      'error: "https://127.0.0.1:59999/api/v1" (from MAPI_URL) ends with /api/v1, which every request path already starts with.\n' +
        'hint: Drop the /api/v1 suffix: run `export MAPI_URL=https://127.0.0.1:59999`.\n',
    );
    expect(httpFromFlag.stderr).toBe(
      'error: "http://127.0.0.1:59999" (from --url) is an http:// URL, but the server only speaks HTTPS.\nhint: Use https://: pass --url https://127.0.0.1:59999.\n',
    );
    expect(suffixFromProfile.stderr).toContain('(saved in profile "staging") ends with /api/v1');
    expect(suffixFromProfile.stderr).toContain('run `mapi login --profile staging --url https://127.0.0.1:59999` to save it there');
    // Refused before the token is read or checked.
    expect(httpAtLogin.stderr).toContain('(from --url) is an http:// URL');
    expect(httpAtLogin.stderr).toContain('pass --url https://127.0.0.1:59999.');
  });
});
