import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { shopManifest } from '../../server/test/dbt-fixtures.js';
import { formatEntry, startInput } from '../src/commands/dbt-sync.js';
import { syncProgressLine } from '../src/sync-progress.js';
import { isolatedEnv, removeTempDirs, runCli, serverVars, show, startTestServer, tempDir, type TestServer } from './helpers.js';

/** `mapi dbt-sync start|status|logs|cancel` against a real server. */

describe('dbt-sync options and lines', () => {
  it('--manifest makes a manifest sync of the file; --ref, --branch and --files pass through', () => {
    const dir = tempDir();
    const file = path.join(dir, 'manifest.json');
    fs.writeFileSync(file, JSON.stringify({ metadata: {}, nodes: {} }));
    expect(startInput({})).toEqual({});
    expect(startInput({ manifest: file, ref: 'main', branch: 'review/x', files: true })).toEqual({
      source: 'manifest',
      manifest: { metadata: {}, nodes: {} },
      ref: 'main',
      branchName: 'review/x',
      output: 'files',
    });
    fs.writeFileSync(file, 'not json');
    expect(() => startInput({ manifest: file })).toThrow(/is not JSON/);
    expect(() => startInput({ manifest: path.join(dir, 'missing.json') })).toThrow(/cannot be read/);
  });

  it('a log entry prints time, level, phase, message and duration; progress prints stage, percent and message', () => {
    expect(
      formatEntry({
        timestamp: '2026-01-01T00:00:00.000Z',
        level: 'info',
        stream: 'system',
        message: 'Read the manifest',
        phase: 'read-manifest',
        durationMs: 12,
      }),
    ).toBe('2026-01-01T00:00:00.000Z info  [read-manifest] Read the manifest (12 ms)');
    expect(formatEntry({ timestamp: '2026-01-01T00:00:00.000Z', level: 'error', stream: 'system', message: 'boom', phase: null, durationMs: null })).toBe(
      '2026-01-01T00:00:00.000Z error boom',
    );
    expect(
      syncProgressLine({
        syncJobId: 'x',
        status: 'PROCESSING_MANIFEST',
        progress: { stage: 'PROCESSING_MANIFEST', percentComplete: 25, message: 'Processing the manifest' },
        updatedAt: '',
      }),
    ).toBe('PROCESSING_MANIFEST 25% Processing the manifest');
  });
});

describe.each(STORE_INDEPENDENT)('mapi dbt-sync (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let d: number;
  let manifestFile: string;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`dbt ${dialect}`);
    manifestFile = path.join(tempDir(), 'manifest.json');
    fs.writeFileSync(manifestFile, JSON.stringify(shopManifest()));
  });
  afterAll(async () => {
    await server?.stop();
    removeTempDirs();
  });

  it('start follows the sync to its end, showing each stage, then prints the result; status, logs and cancel read it', async () => {
    const started = await runCli(['dbt-sync', 'start', String(d), '--manifest', manifestFile], { env });
    expect(started.code, show(started)).toBe(0);
    const id = /Sync (\S+) started; it writes to dbt-sync\/manifest-\d{14}-[0-9a-f]{8}\./.exec(started.stderr)?.[1];
    expect(id, show(started)).toBeDefined();
    expect(started.stderr).toMatch(/^COMPLETED 100%$/m);
    expect(started.stdout).toMatch(new RegExp(`^Sync ${id} completed in \\d+ ms: 4 cubes from 4 models\\.$`, 'm'));

    const status = await runCli(['dbt-sync', 'status', String(d), String(id)], { env });
    expect(status.stdout.trim()).toBe('COMPLETED 100%');
    const logs = await runCli(['dbt-sync', 'logs', String(d), String(id)], { env });
    expect(logs.code, show(logs)).toBe(0);
    expect(logs.stdout).toMatch(/ info {2}\[write-files\] Committed 4 changes to dbt-sync\/manifest-/);
    const cancel = await runCli(['dbt-sync', 'cancel', String(d), String(id)], { env });
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toMatch(/is not running/);
  });

  it('--files --json prints the generated files and commits nothing; a failed sync exits 1 with its reason', async () => {
    const files = await runCli(['dbt-sync', 'start', String(d), '--manifest', manifestFile, '--files', '--json'], { env });
    expect(files.code, show(files)).toBe(0);
    const parsed = JSON.parse(files.stdout) as Array<{ path: string; content: string }>;
    expect(parsed.map((f) => f.path)).toEqual([
      'model/cubes/dbt/customers.yml',
      'model/cubes/dbt/orders.yml',
      'model/cubes/dbt/payments.yml',
      'model/cubes/dbt/stg_orders.yml',
    ]);

    const failed = await runCli(['dbt-sync', 'start', String(d)], { env });
    expect(failed.code, show(failed)).toBe(1);
    expect(failed.stderr).toMatch(/failed: A compiled manifest is required: there is no target\/manifest\.json on main/);
    const id = /Sync (\S+) started/.exec(failed.stderr)?.[1];
    const status = await runCli(['dbt-sync', 'status', String(d), String(id), '--json'], { env });
    expect(JSON.parse(status.stdout)).toMatchObject({ status: 'FAILED', progress: { stage: 'FAILED' } });
  });
});
