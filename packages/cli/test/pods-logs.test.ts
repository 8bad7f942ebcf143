import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { formatLine, parseLines, parseSource } from '../src/commands/logs.js';
import { completion, FAST_RUNTIME_ENV, isolatedEnv, removeTempDirs, runCli, serverVars, show, spawnCli, startTestServer, type TestServer } from './helpers.js';

/** `mapi pods` and `mapi logs` against a real server that runs deployments' pods. */

const WAIT = { timeout: 30_000, interval: 100 };
/** `<date> <pod> <message>`, as `mapi logs` prints a line. */
const LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z production-[a-z0-9]{5} \S/;

describe('logs options', () => {
  it('--lines is 1 to 200, --source production or dev; a line prints as date, pod and message, or as its JSON', () => {
    expect(parseLines(undefined)).toBe(100);
    expect(parseLines('200')).toBe(200);
    for (const bad of ['0', '201', '1.5', '-3', 'ten', '']) expect(() => parseLines(bad)).toThrow(/from 1 to 200/);
    expect(parseSource('dev')).toBe('dev');
    expect(parseSource(undefined)).toBeUndefined();
    expect(() => parseSource('staging')).toThrow(/"production" or "dev"/);
    const line = { pod: 'production-abcde', date: '2026-01-01T00:00:00.000Z', message: 'Listening on 127.0.0.1:4000' };
    expect(formatLine(line, false)).toBe('2026-01-01T00:00:00.000Z production-abcde Listening on 127.0.0.1:4000');
    expect(JSON.parse(formatLine(line, true))).toEqual(line);
  });
});

describe.each(STORE_INDEPENDENT)('mapi pods and mapi logs (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let d: number;
  let podName: string;

  const pods = async (deploymentId: number) => {
    const answer = await server.get(`/api/v1/deployments/${deploymentId}/pods`);
    expect(answer.status, answer.text).toBe(200);
    return answer.body.items as { name: string; status: string; ready: boolean }[];
  };
  const running = (deploymentId: number) =>
    vi.waitFor(async () => {
      const [pod] = await pods(deploymentId);
      expect(pod).toMatchObject({ status: 'Running', ready: true });
      return pod as { name: string };
    }, WAIT);

  beforeAll(async () => {
    server = await startTestServer(dialect, FAST_RUNTIME_ENV);
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`Pods ${dialect}`);
    podName = (await running(d)).name;
  });
  afterAll(async () => {
    await server?.stop();
    removeTempDirs();
  });

  it('pods: a table of NAME STATUS READY RESTARTS TYPE, or the pods as JSON', async () => {
    const [table, json, missing] = await Promise.all([
      runCli(['pods', String(d)], { env }),
      runCli(['pods', String(d), '--json'], { env }),
      runCli(['pods', '987654'], { env }),
    ]);
    expect(table.code, show(table)).toBe(0);
    const [header, row, ...rest] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^NAME\s+STATUS\s+READY\s+RESTARTS\s+TYPE$/);
    expect(row?.split(/\s+/)).toEqual([podName, 'Running', 'yes', '0', 'production']);
    expect(rest).toEqual([]);
    expect(json.code, show(json)).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([{ name: podName, containers: ['MAIN'], ready: true, restartCount: 0, status: 'Running', type: 'production' }]);
    expect(missing.code, show(missing)).toBe(1);
    expect(missing.stderr).toContain('mapi deployments list');
  });

  it('logs: the newest lines as "<date> <pod> <message>", --lines, --source, --pod, and NDJSON with --json', async () => {
    const [all, two, json, dev, onePod, otherPod] = await Promise.all([
      runCli(['logs', String(d)], { env }),
      runCli(['logs', String(d), '--lines', '2'], { env }),
      runCli(['logs', String(d), '--json', '--source', 'production'], { env }),
      runCli(['logs', String(d), '--source', 'dev'], { env }),
      runCli(['logs', String(d), '--pod', podName], { env }),
      runCli(['logs', String(d), '--pod', 'production-nope0', '--json'], { env }),
    ]);
    for (const result of [all, two, json, dev, onePod, otherPod]) expect(result.code, show(result)).toBe(0);
    const lines = all.stdout.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) expect(line).toMatch(LINE);
    expect(lines.some((l) => l.includes(` ${podName} Scheduled pod ${podName}`))).toBe(true);
    expect(two.stdout.trimEnd().split('\n')).toEqual(lines.slice(-2));
    const objects = json.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { pod: string; date: string; message: string });
    expect(objects.map((o) => `${o.date} ${o.pod} ${o.message}`)).toEqual(lines);
    expect(dev.stdout).toBe('');
    expect(dev.stderr).toContain('No log lines match yet.');
    expect(onePod.stdout).toBe(all.stdout);
    expect(otherPod.stdout).toBe('');
    expect(otherPod.stderr).toBe('');
  });

  it('logs: bad options exit 1 before any request', async () => {
    const [lines, source] = await Promise.all([
      runCli(['logs', String(d), '--lines', '500'], { env }),
      runCli(['logs', String(d), '--source', 'staging'], { env }),
    ]);
    expect(lines.code, show(lines)).toBe(1);
    expect(lines.stderr).toContain('--lines must be a whole number from 1 to 200, got "500".');
    expect(source.code, show(source)).toBe(1);
    expect(source.stderr).toContain('--source must be "production" or "dev"');
  });

  it('logs --follow: prints the tail, then a line written after it started, until Ctrl-C, which exits 0', async () => {
    const child = spawnCli(['logs', String(d), '--follow', '--lines', '1'], { env });
    const done = completion(child);
    let stdout = '';
    child.stdout?.on('data', (chunk: string) => (stdout += chunk));
    await vi.waitFor(() => expect(stdout).toMatch(/\n/), WAIT);
    expect(stdout.trimEnd().split('\n')).toHaveLength(1);

    const changed = await server.put(`/api/v1/deployments/${d}/env-vars`, { env_variables: [{ name: 'X', value: '1' }] });
    expect(changed.status, changed.text).toBe(200);
    await vi.waitFor(() => expect(stdout).toContain('environment variables changed: X (added)'), WAIT);
    child.kill('SIGINT');
    const result = await done;
    expect(result.code, show(result)).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    for (const line of lines) expect(line).toMatch(LINE);
    // Each line once, in the log's order: what the tail shows now ends with what was followed.
    const now = (await runCli(['logs', String(d), '--lines', '200'], { env })).stdout.trimEnd().split('\n');
    const start = now.indexOf(lines[0] as string);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(now.slice(start, start + lines.length)).toEqual(lines);
    expect(result.stderr).toBe('');
  });
});
