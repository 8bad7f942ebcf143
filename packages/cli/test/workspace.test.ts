import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../server/src/areas/api-keys/key-format.js';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { completion, isolatedEnv, removeTempDirs, runCli, serverVars, show, spawnCli, startTestServer, type TestServer } from './helpers.js';

/** Folders, workspace listings, bulk moves and deletes, against a real server. */

const PROGRESS_LINE = /^(moved|deleted) \d+\/\d+, \d+ failed(, \d+ skipped)?$/;

afterAll(removeTempDirs);

describe.each(STORE_INDEPENDENT)('mapi workspace commands (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let d: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`Workspace ${dialect}`);
  });

  afterAll(async () => {
    await server?.stop();
  });

  const ids = (entries: { type: string; id: number }[]) => entries.map((e) => `${e.type.toLowerCase()}:${e.id}`).sort();

  it('folders create makes top-level and nested folders; folders tree shows them indented with their ids', async () => {
    const top = await runCli(['folders', 'create', String(d), 'Finance'], { env });
    expect(top.code, show(top)).toBe(0);
    const financeId = Number(/\(folder:(\d+)\)/.exec(top.stdout)?.[1]);
    expect(top.stdout).toContain(`Created folder "Finance" (folder:${financeId}) at the workspace root of deployment ${d}.`);

    const nested = await runCli(['folders', 'create', String(d), 'Q1 2026', '--parent', String(financeId), '--json'], { env });
    expect(nested.code, show(nested)).toBe(0);
    const q1 = JSON.parse(nested.stdout);
    expect(q1).toMatchObject({ name: 'Q1 2026', parentId: financeId, deploymentId: d });
    const archiveId = await server.folder(d, 'Archive');

    const tree = await runCli(['folders', 'tree', String(d)], { env });
    expect(tree.code, show(tree)).toBe(0);
    expect(tree.stdout).toBe(
      [`deployment ${d} (workspace root)`, `├── Archive  folder:${archiveId}`, `└── Finance  folder:${financeId}`, `    └── Q1 2026  folder:${q1.id}`, ''].join(
        '\n',
      ),
    );

    const path = await runCli(['folders', 'path', String(d), `folder:${q1.id}`], { env });
    expect(path.code, show(path)).toBe(0);
    expect(path.stdout).toBe([`deployment ${d} (workspace root)`, `└── Finance  folder:${financeId}`, `    └── Q1 2026  folder:${q1.id}`, ''].join('\n'));
    const pathJson = await runCli(['folders', 'path', String(d), String(q1.id), '--json'], { env });
    expect(JSON.parse(pathJson.stdout).map((f: { id: number }) => f.id)).toEqual([financeId, q1.id]);
    const rootPath = await runCli(['folders', 'path', String(d), 'root'], { env });
    expect(rootPath.code, show(rootPath)).toBe(1);
    expect(rootPath.stderr).toContain('the workspace root has no path');

    const duplicate = await runCli(['folders', 'create', String(d), 'Finance'], { env });
    expect(duplicate.code, show(duplicate)).toBe(1);
    expect(duplicate.stderr).toContain('409');
  });

  it('deployments create makes a deployment the key can then see; workbooks put creates by slug, then updates and moves', async () => {
    const created = await runCli(['deployments', 'create', `Made by the CLI ${dialect}`, '--json'], { env });
    expect(created.code, show(created)).toBe(0);
    const deployment = JSON.parse(created.stdout);
    expect(deployment).toMatchObject({ name: `Made by the CLI ${dialect}` });
    const listed = await server.get('/api/v1/deployments?first=200');
    expect(listed.body.items.map((x: { id: number }) => x.id)).toContain(deployment.id);

    const folder = await server.folder(deployment.id, 'Reports 2026');
    const first = await runCli(['workbooks', 'put', String(deployment.id), 'q3-revenue', '--name', 'Q3 revenue'], { env });
    expect(first.code, show(first)).toBe(0);
    const workbookId = Number(/\(workbook:(\d+),/.exec(first.stdout)?.[1]);
    expect(first.stdout).toContain(`Created workbook "Q3 revenue" (workbook:${workbookId}, slug q3-revenue) in the workspace root.`);

    const again = await runCli(['workbooks', 'put', String(deployment.id), 'q3-revenue', '--name', 'Q3 revenue', '--folder', String(folder)], { env });
    expect(again.code, show(again)).toBe(0);
    expect(again.stdout).toBe(`Updated workbook "Q3 revenue" (workbook:${workbookId}, slug q3-revenue) in Reports 2026.\n`);
    expect(ids(await server.listing(deployment.id, folder))).toEqual([`workbook:${workbookId}`]);

    const missing = await runCli(['workbooks', 'put', String(deployment.id), 'q3-revenue', '--name', 'Q3 revenue', '--folder', '999999'], { env });
    expect(missing.code, show(missing)).toBe(1);
    expect(missing.stderr).toContain('404');
  });

  it('workbooks duplicate copies beside the source, or where --folder says, under --name', async () => {
    const folder = await server.folder(d, 'Copies here');
    const source = await server.workbook(d, 'Pipeline', folder);
    const beside = await runCli(['workbooks', 'duplicate', String(d), String(source)], { env });
    expect(beside.code, show(beside)).toBe(0);
    const copyId = Number(/\(workbook:(\d+),/.exec(beside.stdout)?.[1]);
    expect(beside.stdout).toMatch(
      new RegExp(`^Copied workbook:${source} to "Copy of Pipeline" \\(workbook:${copyId}, slug [a-z0-9-]+-copy\\) in Copies here\\.\n$`),
    );
    expect(ids(await server.listing(d, folder))).toEqual([`workbook:${source}`, `workbook:${copyId}`].sort());

    const toRoot = await runCli(['workbooks', 'duplicate', String(d), String(source), '--folder', 'root', '--name', 'Pipeline (root)', '--json'], { env });
    expect(toRoot.code, show(toRoot)).toBe(0);
    expect(JSON.parse(toRoot.stdout)).toMatchObject({ name: 'Pipeline (root)', folderId: null });

    const missing = await runCli(['workbooks', 'duplicate', String(d), '999999'], { env });
    expect(missing.code, show(missing)).toBe(1);
    expect(missing.stderr).toContain('404');
  });

  it('workspace ls lists a folder or the root as a table, TYPE:ID refs or JSON', async () => {
    const folder = await server.folder(d, 'Listing');
    const sub = await server.folder(d, 'Sub', folder);
    const workbook = await server.workbook(d, 'Budget', folder);
    const report = await server.report(d, 'Revenue', folder);
    const [table, refs, root] = await Promise.all([
      runCli(['workspace', 'ls', String(d), String(folder)], { env }),
      runCli(['workspace', 'ls', String(d), String(folder), '--refs'], { env }),
      runCli(['workspace', 'ls', String(d), 'root', '--json'], { env }),
    ]);
    expect(table.code, show(table)).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ITEM\s+NAME\s+UPDATED$/);
    // Folders first, then workbooks and reports by name.
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/).slice(0, 2))).toEqual([
      [`folder:${sub}`, 'Sub'],
      [`workbook:${workbook}`, 'Budget'],
      [`report:${report}`, 'Revenue'],
    ]);
    expect(refs.stdout).toBe(`folder:${sub}\nworkbook:${workbook}\nreport:${report}\n`);
    expect(root.code, show(root)).toBe(0);
    expect(ids(JSON.parse(root.stdout))).toEqual(ids(await server.listing(d, 'root')));
  });

  it('move with ITEM arguments applies every item, prints the summary and exits 0', async () => {
    const target = await server.folder(d, 'Target args');
    const w1 = await server.workbook(d, 'Args one');
    const w2 = await server.workbook(d, 'Args two');
    const r1 = await server.report(d, 'Args report');
    const moved = await runCli(['move', String(d), '--to', String(target), `workbook:${w1}`, `WORKBOOK:${w2}`, `report:${r1}`, `workbook:${w1}`], { env });
    expect(moved.code, show(moved)).toBe(0);
    expect(moved.stdout).toBe(`Moved 3 items to folder ${target} in deployment ${d} (1 request).\n`);
    expect(ids(await server.listing(d, target))).toEqual([`report:${r1}`, `workbook:${w1}`, `workbook:${w2}`].sort());
  });

  it('move reads items from stdin: TYPE:ID lines (with comments), or a JSON array of objects and strings', async () => {
    const target = await server.folder(d, 'Target stdin');
    const [a, b, c, e] = await Promise.all([
      server.workbook(d, 'Stdin a'),
      server.workbook(d, 'Stdin b'),
      server.report(d, 'Stdin c'),
      server.workbook(d, 'Stdin e'),
    ]);
    const lines = await runCli(['move', String(d), '--to', String(target), '-'], { env, input: `# from a file\nworkbook:${a}\n\n  report:${c}  \n` });
    expect(lines.code, show(lines)).toBe(0);
    expect(lines.stdout).toContain(`Moved 2 items to folder ${target}`);
    const json = await runCli(['move', String(d), '--to', String(target), `workbook:${e}`, '-'], {
      env,
      input: JSON.stringify([{ type: 'WORKBOOK', id: b }, `workbook:${a}`]),
    });
    expect(json.code, show(json)).toBe(0);
    expect(json.stdout).toContain(`Moved 3 items to folder ${target}`);
    expect(ids(await server.listing(d, target))).toEqual([`report:${c}`, `workbook:${a}`, `workbook:${b}`, `workbook:${e}`].sort());
  });

  it('a move with failures exits 2 with the failed table; progress goes to stderr as plain lines when it is not a terminal', async () => {
    const target = await server.folder(d, 'Target partial');
    const parent = await server.folder(d, 'Parent partial');
    const child = await server.folder(d, 'Child partial', parent);
    const good = await server.workbook(d, 'Partial good');
    // Order: good, missing, folder into its own descendant, good folder; chunks of 2 -> 2 requests.
    const result = await runCli(
      ['move', String(d), '--to', String(child), `workbook:${good}`, 'workbook:999999', `folder:${parent}`, `folder:${target}`, '--chunk-size', '2'],
      { env },
    );
    expect(result.code, show(result)).toBe(2);
    const out = result.stdout.split('\n');
    expect(out[0]).toBe(`Moved 2 of 4 items to folder ${child} in deployment ${d} (2 requests).`);
    expect(result.stdout).toContain('2 items failed:');
    const header = out.findIndex((l) => /^ITEM\s+STATUS\s+MESSAGE$/.test(l));
    expect(header).toBeGreaterThan(0);
    const rows = out.slice(header + 1, header + 3).map((l) => l.split(/\s{2,}/));
    expect(rows[0]?.slice(0, 2)).toEqual(['workbook:999999', '404']);
    expect(rows[0]?.[2]).toContain('999999');
    expect(rows[1]?.slice(0, 2)).toEqual([`folder:${parent}`, '400']);
    expect(rows[1]?.[2]).toContain('which is inside it');

    const progress = result.stderr.trimEnd().split('\n');
    expect(progress).toEqual(['moved 1/4, 1 failed', 'moved 2/4, 2 failed']);
    expect(progress.every((l) => PROGRESS_LINE.test(l))).toBe(true);
    expect(result.stderr).not.toContain('\u001b');
    expect(ids(await server.listing(d, child))).toEqual([`folder:${target}`, `workbook:${good}`].sort());
  });

  it('--json prints the result object, which matches what the server now holds', async () => {
    const target = await server.folder(d, 'Target json');
    const [w1, w2] = await Promise.all([server.workbook(d, 'Json one'), server.workbook(d, 'Json two')]);
    const result = await runCli(['move', String(d), '--to', String(target), `workbook:${w1}`, `workbook:${w2}`, 'report:888888', '--json'], { env });
    expect(result.code, show(result)).toBe(2);
    const body = JSON.parse(result.stdout);
    expect(Object.keys(body).sort()).toEqual(['failed', 'moved', 'requests', 'skipped']);
    expect(body.requests).toBe(1);
    expect(body.skipped).toEqual([]);
    expect(body.failed).toEqual([{ type: 'REPORT', id: 888888, error: { status: 404, message: expect.stringContaining('888888') } }]);
    const listing = await server.listing(d, target);
    expect(ids(body.moved)).toEqual(ids(listing));
    for (const entry of body.moved) expect(entry.folderId).toBe(target);
  });

  it('--keep-subtrees leaves out items inside a moved folder and reports them as skipped', async () => {
    const target = await server.folder(d, 'Target keep');
    const outer = await server.folder(d, 'Keep outer');
    const inner = await server.folder(d, 'Keep inner', outer);
    const deep = await server.workbook(d, 'Keep deep', inner);
    const result = await runCli(['move', String(d), '--to', String(target), `folder:${outer}`, `folder:${inner}`, `workbook:${deep}`, '--keep-subtrees'], {
      env,
    });
    expect(result.code, show(result)).toBe(0);
    // Everything sent was applied: the two items inside the moved folder count as travelled, not as failed.
    expect(result.stdout.split('\n')[0]).toBe(
      `Moved 1 item to folder ${target} in deployment ${d} (1 request); 2 more travelled inside a moved folder (--keep-subtrees).`,
    );
    expect(result.stdout).toContain('Not sent themselves, as they travelled inside a moved folder:');
    expect(result.stdout).toMatch(new RegExp(`folder:${inner}\\s+folder:${outer}`));
    expect(result.stdout).toMatch(new RegExp(`workbook:${deep}\\s+folder:${outer}`));
    // The subtree kept its shape: inner is still inside outer, the workbook inside inner.
    expect(ids(await server.listing(d, target))).toEqual([`folder:${outer}`]);
    expect(ids(await server.listing(d, outer))).toEqual([`folder:${inner}`]);
    expect(ids(await server.listing(d, inner))).toEqual([`workbook:${deep}`]);
  });

  it('--dry-run against a live server changes nothing', async () => {
    const target = await server.folder(d, 'Target dry');
    const w = await server.workbook(d, 'Dry workbook');
    const before = ids(await server.listing(d, 'root'));
    const result = await runCli(['move', String(d), '--to', String(target), `workbook:${w}`, `workbook:${w}`, '--dry-run'], { env });
    expect(result.code, show(result)).toBe(0);
    expect(result.stdout).toContain(`Would move 1 item (1 duplicate left out) to folder ${target} in deployment ${d}, in 1 request:`);
    expect(result.stdout).toContain(`  workbook:${w}`);
    expect(ids(await server.listing(d, 'root'))).toEqual(before);
    expect(await server.listing(d, target)).toEqual([]);
  });

  it('request-level errors exit 1: an unknown deployment is named, a refused token gets the login hint', async () => {
    const [unknown, refused] = await Promise.all([
      runCli(['move', '987654', '--to', 'root', 'workbook:1'], { env }),
      runCli(['workspace', 'ls', String(d)], { env: { ...env, MAPI_TOKEN: generateApiKey() } }),
    ]);
    expect(unknown.code, show(unknown)).toBe(1);
    expect(unknown.stderr).toContain('404 Deployment not found: Deployment 987654 does not exist.');
    expect(unknown.stderr).toMatch(/request id: \S+/);
    expect(unknown.stderr).toContain('mapi deployments list');
    expect(refused.code, show(refused)).toBe(1);
    expect(refused.stderr).toContain('401');
    expect(refused.stderr).toContain('mapi login');
    expect(refused.stderr).toContain('MAPI_TOKEN');
  });

  it('delete removes items, reports the ones that fail (exit 2), and reads items from stdin', async () => {
    const parent = await server.folder(d, 'Delete parent');
    const child = await server.folder(d, 'Delete child', parent);
    const w = await server.workbook(d, 'Delete workbook', parent);
    const r = await server.report(d, 'Delete report');
    // The parent still has a subfolder when its turn comes: refused with 400.
    const first = await runCli(['delete', String(d), `workbook:${w}`, `folder:${parent}`, `report:${r}`, 'report:777777'], { env });
    expect(first.code, show(first)).toBe(2);
    expect(first.stdout).toContain(`Deleted 2 of 4 items in deployment ${d} (1 request).`);
    expect(first.stdout).toMatch(new RegExp(`folder:${parent}\\s+400\\s+\\S`));
    expect(first.stdout).toMatch(/report:777777\s+404\s+\S/);
    expect(first.stderr.trimEnd()).toBe('deleted 2/4, 2 failed');
    expect((await server.get(`/api/v1/deployments/${d}/workbooks/${w}`)).status).toBe(404);
    expect((await server.get(`/api/v1/deployments/${d}/reports/${r}`)).status).toBe(404);

    // Children before their parent, as a JSON list on stdin.
    const second = await runCli(['delete', String(d), '-', '--json'], { env, input: JSON.stringify([`folder:${child}`, { type: 'folder', id: parent }]) });
    expect(second.code, show(second)).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual({
      deleted: [
        { type: 'FOLDER', id: child },
        { type: 'FOLDER', id: parent },
      ],
      failed: [],
      requests: 1,
    });
    expect((await server.get(`/api/v1/deployments/${d}/folders/${parent}`)).status).toBe(404);
  });

  it('Ctrl-C during a move stops between requests, reports exactly what was applied and exits 130', async () => {
    const target = await server.folder(d, 'Target interrupted');
    const workbooks: number[] = [];
    for (let i = 0; i < 40; i++) workbooks.push(await server.workbook(d, `Interrupted ${i}`));
    const child = spawnCli(['move', String(d), '--to', String(target), '-', '--chunk-size', '1', '--json'], {
      env,
      input: workbooks.map((id) => `workbook:${id}`).join('\n'),
    });
    // Interrupt once the first request has been answered: the handler is installed by then.
    let seen = '';
    child.stderr?.on('data', (chunk: string | Buffer) => {
      if (seen.includes('moved 1/')) return;
      seen += String(chunk);
      if (seen.includes('moved 1/')) child.kill('SIGINT');
    });
    const result = await completion(child);
    expect(result.code, show(result)).toBe(130);
    expect(result.stderr).toContain('Interrupted: stopping after the request in flight');
    const body = JSON.parse(result.stdout);
    expect(body.interrupted).toBe(true);
    expect(body.moved.length).toBeGreaterThan(0);
    expect(body.moved.length + body.pending.length).toBe(40);
    // What the CLI says was applied is exactly what the server holds.
    expect(ids(await server.listing(d, target))).toEqual(ids(body.moved));
  });

  it('SIGTERM during a move is handled like Ctrl-C: the summary of what was applied, then exit 143', async () => {
    const target = await server.folder(d, 'Target terminated');
    const workbooks: number[] = [];
    for (let i = 0; i < 20; i++) workbooks.push(await server.workbook(d, `Terminated ${i}`));
    const child = spawnCli(['move', String(d), '--to', String(target), '-', '--chunk-size', '1'], {
      env,
      input: workbooks.map((id) => `workbook:${id}`).join('\n'),
    });
    let seen = '';
    child.stderr?.on('data', (chunk: string | Buffer) => {
      if (seen.includes('moved 1/')) return;
      seen += String(chunk);
      if (seen.includes('moved 1/')) child.kill('SIGTERM');
    });
    const result = await completion(child);
    expect(result.code, show(result)).toBe(143);
    expect(result.stderr).toContain('Terminated: stopping after the request in flight');
    const moved = Number(/^Interrupted: moved (\d+) of 20 items to folder \d+ in deployment \d+ before stopping/.exec(result.stdout)?.[1]);
    expect(moved).toBeGreaterThan(0);
    expect(result.stdout).toMatch(new RegExp(`\\n${20 - moved} items? not sent: workbook:`));
    expect((await server.listing(d, target)).length).toBe(moved);
  });
});
