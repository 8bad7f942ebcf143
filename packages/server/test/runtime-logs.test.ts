import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogSink, redact, redactionOf } from '../src/runtime/log-sink.js';
import { DIALECTS, TestApp } from './harness.js';

/*
 * Issue 14, "Environment variables and secrets" and "pods and logs" (reference 1.9): runtime log
 * lines never hold a variable's value, and each deployment's log is bounded.
 */

describe('runtime log redaction', () => {
  it('hides the values of secret variables wherever they appear, and whatever follows their NAME= or NAME:, even when short', () => {
    const redaction = redactionOf({ DB_PASSWORD: 's3cr3t-pw', API_TOKEN: 'abc', DB_TYPE: 'postgres', DB_URL: 'postgres://app@db.example.com/x' });
    expect(redact('connect to postgres://app:s3cr3t-pw@db/x failed (s3cr3t-pw)', redaction)).toBe(
      'connect to postgres://app:[REDACTED]@db/x failed ([REDACTED])',
    );
    expect(redact('using API_TOKEN=abc and "API_TOKEN": "abc"', redaction)).toBe('using API_TOKEN=[REDACTED] and "API_TOKEN": "[REDACTED]"');
    expect(redact('nothing here', redaction)).toBe('nothing here');
  });

  it('values of variables that are not secrets (they read back in clear) stay readable', () => {
    const redaction = redactionOf({ DB_TYPE: 'postgres', DB_URL: 'postgres://app@db.example.com/x', CUBEJS_SCHEMA: 'analytics' });
    expect(redact('DB_TYPE=postgres needs DB_URL (postgres://app@db.example.com/x) in schema analytics', redaction)).toBe(
      'DB_TYPE=postgres needs DB_URL (postgres://app@db.example.com/x) in schema analytics',
    );
  });

  it("the pod's own secret, given beside the variables, is hidden too", () => {
    expect(redact('secret is 0123456789abcdef', redactionOf({}, ['0123456789abcdef']))).toBe('secret is [REDACTED]');
  });
});

for (const dialect of DIALECTS) {
  describe(`runtime log storage (${dialect})`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await TestApp.create(dialect);
    });
    afterAll(() => t.close());

    it('keeps about the newest `keepPerDeployment` lines of each deployment, the newest always, and redacts before storing', async () => {
      const deploymentId = await t.deployment('log bound');
      const other = await t.deployment('log bound other');
      const errors: Error[] = [];
      const sink = new LogSink(t.store, { flushMs: 5, keepPerDeployment: 100, onError: (e) => errors.push(e) });
      const target = {
        tenantId: t.tenantId,
        deploymentId,
        type: 'production' as const,
        pod: 'production-abcde',
        redaction: redactionOf({ DB_PASSWORD: 'hunter2-secret' }),
      };
      for (let i = 0; i < 350; i++) sink.write(target, `line ${i} hunter2-secret`);
      sink.write({ ...target, deploymentId: other }, 'the other deployment');
      await sink.flush();
      expect(errors).toEqual([]);
      const rows = await t.store.db.selectFrom('runtime_logs').select(['message']).where('deployment_id', '=', deploymentId).orderBy('id').execute();
      expect(rows.length).toBeGreaterThanOrEqual(100);
      expect(rows.length).toBeLessThanOrEqual(110);
      expect(rows.at(-1)?.message).toBe('line 349 [REDACTED]');
      expect(rows.every((r) => !r.message.includes('hunter2'))).toBe(true);
      expect(await t.store.db.selectFrom('runtime_logs').select('message').where('deployment_id', '=', other).execute()).toEqual([
        { message: 'the other deployment' },
      ]);
    });
  });
}
